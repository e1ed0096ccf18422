"""The test databases themselves: a released database comes back equal to the template, and the apps' kept
engines keep only their idle connections across a reset (tests/support/database.py, warm_databases.py)."""

from __future__ import annotations

import itertools

import asyncpg
from sqlalchemy import text

from app.db.engine import Database, async_url
from app.main import create_app
from tests.support.curation import seed_graph
from tests.support.database import TEMPLATE_DB, DatabasePool, PgCluster
from tests.support.warm_databases import database_name

_pools = itertools.count()


async def _own_pool(cluster: PgCluster) -> DatabasePool:
    """A pool apart from the session's, with database names of its own."""
    pool = DatabasePool(cluster, prefix=f"pooltest{next(_pools)}")
    await pool.load_template()
    return pool


async def _content(cluster: PgCluster, database: str) -> tuple[list, list, list]:
    conn = await cluster.admin(database)
    try:
        tables = [
            r[0]
            for r in await conn.fetch(
                "SELECT quote_ident(relname) FROM pg_class WHERE relnamespace = 'public'::regnamespace"
                " AND relkind = 'r' ORDER BY relname"
            )
        ]
        counts = [(table, await conn.fetchval(f"SELECT count(*) FROM {table}")) for table in tables]
        projects = [tuple(r) for r in await conn.fetch("SELECT id, name, settings FROM projects ORDER BY id")]
        sequences = sorted(tuple(r) for r in await conn.fetch("SELECT sequencename, last_value FROM pg_sequences"))
        return counts, projects, sequences
    finally:
        await conn.close()


async def _scribble(url: str) -> None:
    """Rows in most tables, a changed template row and moved sequences."""
    db = Database(async_url(url), pool_size=1)
    try:
        async with db.transaction() as conn:
            await conn.execute(text("UPDATE projects SET name = 'renamed' WHERE id = 'default'"))
            await conn.execute(text("INSERT INTO projects (id, name) VALUES ('other', 'Other')"))
            await seed_graph(
                conn,
                "other",
                docs={"d1": ["c1", "c2"]},
                ents=[("Ada", "person", "a mathematician", ["c1"]), ("Babbage", "person", "an inventor", ["c2"])],
                rels=[("Ada", "Babbage", "worked with", "work", 1.0, ["c1"])],
            )
            await conn.execute(
                text("INSERT INTO pipeline_events (project_id, document_id, kind) VALUES ('other', 'd1', 'started')")
            )
    finally:
        await db.close()


async def test_a_released_database_comes_back_equal_to_the_template(pg_cluster: PgCluster) -> None:
    pool = await _own_pool(pg_cluster)
    template = await _content(pg_cluster, TEMPLATE_DB)
    try:
        first, second = await pool.acquire(), await pool.acquire()
        for url in (first, second):
            await _scribble(url)
            assert await _content(pg_cluster, database_name(url)) != template
        await pool.release(first)
        await pool.release(second)
        again = {await pool.acquire(), await pool.acquire()}
        assert again == {first, second}  # reset in place, not dropped and created anew
        for url in again:
            assert await _content(pg_cluster, database_name(url)) == template
    finally:
        await pool.close()


async def test_a_reset_keeps_a_kept_engine_s_idle_connections_and_ends_every_other_session(
    pg_cluster: PgCluster,
) -> None:
    pool = await _own_pool(pg_cluster)
    try:
        url, _ = await pool.acquire(), await pool.acquire()  # both held: the next acquire waits for `url`
        kept = pool.warm.lend(url, 2)
        assert kept is not None and pool.warm.lend(url, 2) is None  # one app at a time
        async with kept.connect() as conn:
            kept_pid = await conn.scalar(text("SELECT pg_backend_pid()"))
        await pool.warm.give_back(kept)
        stray = await asyncpg.connect(url)  # a session a test left open
        await pool.release(url)
        assert await pool.acquire() == url

        assert stray.is_closed() or await _ended(stray)
        assert pool.warm.lend(url, 2) is kept
        async with kept.connect() as conn:  # the same server session, still usable
            assert await conn.scalar(text("SELECT pg_backend_pid()")) == kept_pid
        await pool.warm.give_back(kept)
    finally:
        await pool.close()


async def test_an_engine_given_back_with_a_connection_still_out_is_closed(pg_cluster: PgCluster) -> None:
    pool = await _own_pool(pg_cluster)
    try:
        url = await pool.acquire()
        kept = pool.warm.lend(url, 2)
        conn = await kept.engine.connect()  # a task its app left running still holds it
        await conn.execute(text("SELECT 1"))
        await pool.warm.give_back(kept)
        fresh = pool.warm.lend(url, 2)
        assert fresh is not None and fresh is not kept
        await pool.warm.give_back(fresh)
        await conn.close()
    finally:
        await pool.close()


async def _ended(conn: asyncpg.Connection) -> bool:
    try:
        await conn.fetchval("SELECT 1")
    except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError):
        return True
    await conn.close()
    return False


async def test_an_app_given_a_database_uses_it_and_leaves_it_open(make_settings, database_url: str) -> None:  # noqa: ANN001
    settings = make_settings(worker_enabled=False)
    database = Database(async_url(database_url), pool_size=2)
    try:
        app = create_app(settings, database)
        async with app.router.lifespan_context(app):
            assert app.state.container.db is database
        assert database.engine.pool.checkedin() >= 1  # the start-up's connection is still pooled, not disposed
        async with database.connect() as conn:
            assert await conn.scalar(text("SELECT count(*) FROM projects")) >= 1
    finally:
        await database.close()

    own = create_app(settings)
    async with own.router.lifespan_context(own):
        pool = own.state.container.db.engine.pool
        assert pool.checkedin() >= 1
    assert pool.checkedin() == 0  # an app closes the database it opened itself
