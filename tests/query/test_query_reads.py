"""A query's read transaction: REPEATABLE READ on its BEGIN, one snapshot shared with its second connection,
the vector-search settings on both, and pooled connections handed back at the default isolation level."""

from __future__ import annotations

from sqlalchemy import text

from app.db.engine import Database, async_url
from app.repositories.retrieval import open_query_reads

_STATE = text(
    "SELECT current_setting('transaction_isolation') AS isolation, current_setting('hnsw.ef_search') AS ef,"
    " current_setting('hnsw.iterative_scan') AS scan,"
    " (SELECT count(*) FROM projects WHERE id IN ('before', 'meanwhile')) AS projects"
)


async def _add_project(db: Database, name: str) -> None:
    async with db.transaction() as conn:
        await conn.execute(text("INSERT INTO projects (id, name) VALUES (:n, :n)"), {"n": name})


async def test_both_connections_read_one_snapshot_with_the_search_settings(database_url: str) -> None:
    db = Database(async_url(database_url), pool_size=3)
    try:
        await _add_project(db, "before")
        async with db.connect() as conn, db.connect() as beside:
            await open_query_reads(conn, beside, 250)
            await _add_project(db, "meanwhile")  # committed after the snapshot: neither connection sees it
            first = (await conn.execute(_STATE)).mappings().one()
            second = (await beside.execute(_STATE)).mappings().one()
        assert (
            dict(first)
            == dict(second)
            == {"isolation": "repeatable read", "ef": "250", "scan": "relaxed_order", "projects": 1}
        )
        async with db.connect() as conn:
            await open_query_reads(conn, None, 5000)  # one connection; ef_search capped at 1000
            alone = (await conn.execute(_STATE)).mappings().one()
        assert dict(alone) == {"isolation": "repeatable read", "ef": "1000", "scan": "relaxed_order", "projects": 2}
    finally:
        await db.close()


async def test_connections_go_back_to_the_pool_at_the_default_isolation(database_url: str) -> None:
    db = Database(async_url(database_url), pool_size=1)
    try:
        async with db.connect() as conn:
            await open_query_reads(conn, None, 10)
            await conn.execute(text("SELECT 1"))
        async with db.transaction() as conn:  # the same pooled connection: writes must not run REPEATABLE READ
            isolation = await conn.scalar(text("SELECT current_setting('transaction_isolation')"))
        assert isolation == "read committed"
    finally:
        await db.close()
