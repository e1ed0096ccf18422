"""Alembic environment. The app runs migrations itself on start-up (app/db/migrate.py), handing in an
open connection; `alembic upgrade head` from the shell works too, using DATABASE_URL."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.ext.asyncio import create_async_engine

from app.db.tables import metadata

config = context.config
target_metadata = metadata


def _run(connection) -> None:  # noqa: ANN001 - alembic hands a sync Connection
    context.configure(connection=connection, target_metadata=target_metadata, compare_type=False)
    with context.begin_transaction():
        context.run_migrations()


async def _run_from_url(url: str) -> None:
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        await conn.run_sync(_run)
    await engine.dispose()


connection = config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:
    from app.core.config import get_settings
    from app.db.engine import async_url

    url = get_settings().database_url
    if not url:
        raise SystemExit("Set DATABASE_URL to run alembic from the shell (the app migrates itself on start-up).")
    asyncio.run(_run_from_url(async_url(url)))
