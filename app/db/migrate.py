"""Apply Alembic migrations at start-up. An advisory lock makes concurrent starters take turns."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.engine import Database

ROOT = Path(__file__).resolve().parents[2]
MIGRATION_LOCK = 727_001


def alembic_config(embedding_dim: int) -> Config:
    config = Config(str(ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(ROOT / "migrations"))
    config.attributes["embedding_dim"] = embedding_dim
    return config


@cache  # the migration scripts do not change while the process runs
def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config(0)).get_current_head()


async def current_revision(conn: AsyncConnection) -> str | None:
    """The schema's revision: None before the first migration (or, never expected, with several heads).
    Two plain statements; alembic's own lookup reflects the table through the catalog on every call."""
    if (await conn.execute(text("SELECT to_regclass('alembic_version')"))).scalar() is None:
        return None
    revisions = (await conn.execute(text("SELECT version_num FROM alembic_version"))).scalars().all()
    return revisions[0] if len(revisions) == 1 else None


async def upgrade_to_head(db: Database, embedding_dim: int) -> None:
    def _upgrade(conn: Connection) -> None:
        config = alembic_config(embedding_dim)
        config.attributes["connection"] = conn
        command.upgrade(config, "head")

    async with db.transaction() as conn:
        await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": MIGRATION_LOCK})
        # at the head already (every start but the first): skip alembic's script loading and env.py
        if await current_revision(conn) != head_revision():
            await conn.run_sync(_upgrade)


async def stored_embedding_dim(db: Database) -> int | None:
    """The dimension the vector columns were created with (None before the first migration)."""
    async with db.connect() as conn:
        row = (
            await conn.execute(
                text(
                    "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                    "WHERE attrelid = to_regclass('entities') AND attname = 'embedding'"
                )
            )
        ).first()
    if row is None or row[0] is None:
        return None
    return int(row[0].split("(")[1].rstrip(")"))


VECTOR_TABLES = ("chunks", "entities", "relations")
_STORAGE = "SELECT attstorage::text FROM pg_attribute WHERE attrelid = to_regclass(:t) AND attname = 'embedding'"
_STORAGE_NAMES = {"p": "PLAIN", "e": "EXTERNAL", "m": "MAIN", "x": "EXTENDED"}


async def resize_empty_vectors(db: Database, embedding_dim: int) -> bool:
    """Give the vector columns `embedding_dim` dimensions if no vector is stored yet (a database created before
    the embedding model was chosen, at the default size); False, changing nothing, once one is."""
    async with db.transaction() as conn:
        await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": MIGRATION_LOCK})
        present = [
            table
            for table in VECTOR_TABLES
            if (await conn.execute(text("SELECT to_regclass(:t)"), {"t": table})).scalar() is not None
        ]
        for table in present:
            stored = f"SELECT EXISTS (SELECT 1 FROM {table} WHERE embedding IS NOT NULL)"
            if (await conn.execute(text(stored))).scalar():
                return False
        for table in present:  # the HNSW index on the column is rebuilt with it (empty: at once)
            storage = (await conn.execute(text(_STORAGE), {"t": table})).scalar()
            await conn.execute(
                text(
                    f"ALTER TABLE {table} ALTER COLUMN embedding TYPE vector({int(embedding_dim)}), "
                    # a new type brings its default storage back: keep the one migration 0011 chose
                    f"ALTER COLUMN embedding SET STORAGE {_STORAGE_NAMES.get(str(storage), 'MAIN')}"
                )
            )
    return True
