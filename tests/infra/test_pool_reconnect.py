"""Pooled connections the server has closed are replaced before use, without a round trip per checkout."""

from __future__ import annotations

import asyncio

import asyncpg
from sqlalchemy import event
from sqlalchemy.pool import ConnectionPoolEntry

from app.db.engine import Database, async_url
from tests.support.database import end_other_sessions


async def _end_every_other_session(database_url: str) -> None:
    admin = await asyncpg.connect(database_url)
    try:
        await end_other_sessions(admin)
    finally:
        await admin.close()


async def test_connections_ended_by_the_server_are_replaced_before_a_request_uses_them(
    start_app,
    make_settings,
    database_url: str,  # noqa: ANN001
) -> None:
    app = await start_app(make_settings(worker_enabled=False))  # no worker polling: requests meet the pool first
    http, engine = app.http, app.container.db.engine
    await asyncio.gather(*(http.get("/projects") for _ in range(4)))  # several connections wait in the pool
    assert engine.pool.checkedin() >= 2

    await _end_every_other_session(database_url)
    await asyncio.sleep(0.05)  # the event loop reads the end of each closed socket
    answers = await asyncio.gather(*(http.get("/projects") for _ in range(4)))
    assert [a.status_code for a in answers] == [200] * 4


async def test_a_checkout_sends_nothing_to_the_server_before_the_caller_s_statements(database_url: str) -> None:
    sent: list[str] = []
    db = Database(async_url(database_url), pool_size=1)

    def log_queries(dbapi: object, entry: ConnectionPoolEntry) -> None:
        entry.driver_connection.add_query_logger(lambda record: sent.append(record.query))

    event.listen(db.engine.sync_engine.pool, "connect", log_queries)
    try:
        async with db.connect() as conn:  # the first checkout opens the connection
            await conn.exec_driver_sql("SELECT 1")
        sent.clear()
        async with db.connect() as conn:  # the second reuses it
            await conn.exec_driver_sql("SELECT 2")
    finally:
        await db.close()
    # the statement's own transaction, and no ping before it (asyncpg logs prepared statements elsewhere)
    assert sent == ["BEGIN;", "ROLLBACK;"]
