"""Read replicas: reads that can be served by a streaming replica go to one (DATABASE_READ_URL), unless it is
down, lagging, or behind what the client has already seen; then to the primary.

Read-your-writes: a `ReadSession` (one per HTTP request, app/web/read_after.py) carries the lowest WAL position
(LSN) its reads must see. A replica serves the read once its replay position reaches it, waiting at most
`max_wait_ms`; otherwise the primary does. Every read records what it saw (the replica's replay position,
or the fact that the primary was used), so the session's client can be given the position to ask for next.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from app.core import metrics
from app.domain.wal_positions import parse_lsn

log = logging.getLogger(__name__)

_CONNECT_TIMEOUT_S = 3.0  # a replica host that does not answer must not hold a read for long

# One round trip on the replica's connection, before the caller's statements: is it a standby, how far has it
# replayed, and how old is what it has replayed when it still has WAL to replay (caught up: no lag at all, even
# when the primary has been idle for an hour).
_REPLICA_STATE = text("""
SELECT pg_is_in_recovery() AS standby,
       pg_last_wal_replay_lsn()::text AS replayed,
       CASE WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() THEN 0
            ELSE coalesce(extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp()) * 1000, 0)
       END AS lag_ms
""")
PRIMARY_POSITION = text("SELECT pg_current_wal_lsn()::text")


@dataclass
class ReadSession:
    """What one client's request must see and has seen. `floor`: the lowest position its replica reads accept.
    `seen`: the highest position any of its reads observed; `used_primary`: a primary connection was used, so
    what it saw is the primary's current position (asked once, at the end: `Database.primary_position`)."""

    floor: int = 0
    seen: int = 0
    used_primary: bool = False

    def saw(self, position: int) -> None:
        self.seen = max(self.seen, position)


read_session: ContextVar[ReadSession | None] = ContextVar("read_session", default=None)


def note_primary_use() -> None:
    if (session := read_session.get()) is not None:
        session.used_primary = True


class ReplicaUnusable(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Replica:
    name: str
    engine: AsyncEngine
    retry_after_s: float
    down_until: float = 0.0  # the circuit: skipped until then
    status: str = "unknown"  # ok | down | lagging | not_a_standby | unknown (not used yet)
    lag_ms: float | None = None
    replayed: int = 0
    error: str | None = None

    def usable(self, now: float) -> bool:
        return now >= self.down_until

    def trip(self, status: str, error: str | None = None) -> None:
        self.status, self.error = status, error
        self.down_until = time.monotonic() + self.retry_after_s
        metrics.DB_REPLICA_UP.labels(replica=self.name).set(0)

    def report(self) -> dict:
        return {"name": self.name, "status": self.status, "lag_ms": self.lag_ms, "error": self.error}


@dataclass
class ReadRouter:
    replicas: list[Replica]
    max_wait_ms: int
    max_lag_ms: int
    _turn: int = field(default=0)
    # The primary's position once this process had migrated it: a replica that has not replayed that far may lack
    # a table or column the code reads ("relation does not exist"), however small its lag.
    schema_floor: int = field(default=0)

    @classmethod
    def build(cls, urls: list[str], *, pool_size: int, max_wait_ms: int, max_lag_ms: int, retry_s: float) -> ReadRouter:
        replicas = []
        for n, url in enumerate(urls, start=1):
            engine = create_async_engine(
                url,
                pool_size=pool_size,
                max_overflow=pool_size,
                hide_parameters=True,
                connect_args={"timeout": _CONNECT_TIMEOUT_S},
            )
            replicas.append(Replica(f"replica-{n}", engine, retry_s))
        return cls(replicas, max_wait_ms, max_lag_ms)

    def _in_turn(self) -> list[Replica]:
        """Every replica whose circuit is closed, starting with the next one in turn (reads spread evenly)."""
        now = time.monotonic()
        self._turn = (self._turn + 1) % len(self.replicas)
        ordered = self.replicas[self._turn :] + self.replicas[: self._turn]
        return [r for r in ordered if r.usable(now)]

    @asynccontextmanager
    async def connection(self, session: ReadSession | None) -> AsyncIterator[AsyncConnection | None]:
        """A connection to a replica able to serve `session`'s read, or None (then the caller reads the
        primary). The connection's transaction is fresh: the caller's first statement starts it."""
        floor = max(session.floor if session is not None else 0, self.schema_floor)
        reason = "down"
        for replica in self._in_turn():
            async with AsyncExitStack() as attempt:
                try:
                    conn = await attempt.enter_async_context(replica.engine.connect())
                    replayed = await self._ready(replica, conn, floor)
                except ReplicaUnusable as refused:
                    reason = refused.reason
                    continue
                except (SQLAlchemyError, OSError, TimeoutError) as exc:
                    log.warning(
                        "read replica %s unreachable (%s): reads go elsewhere", replica.name, type(exc).__name__
                    )
                    replica.trip("down", type(exc).__name__)
                    reason = "down"
                    continue
                if session is not None:
                    session.saw(replayed)
                metrics.DB_READS.labels(target="replica").inc()
                yield conn
                return
        metrics.DB_READ_FALLBACKS.labels(reason=reason).inc()
        yield None

    async def _ready(self, replica: Replica, conn: AsyncConnection, floor: int) -> int:
        """The replica's replay position once it is at least `floor`; ReplicaUnusable when it is no standby,
        lags too far, or does not reach `floor` within max_wait_ms (that last one does not trip its circuit:
        the replica is fine, the client is only ahead of it)."""
        deadline = time.monotonic() + self.max_wait_ms / 1000
        pause = 0.005
        while True:
            state = (await conn.execute(_REPLICA_STATE)).mappings().one()
            await conn.rollback()  # the caller may need to open its transaction with SET TRANSACTION
            if not state["standby"]:
                replica.trip("not_a_standby", "the server is not in recovery (promoted?)")
                raise ReplicaUnusable("not_a_standby")
            replica.lag_ms = float(state["lag_ms"])
            replica.replayed = parse_lsn(state["replayed"])
            if replica.lag_ms > self.max_lag_ms:
                replica.trip("lagging", f"{replica.lag_ms:.0f} ms behind")
                raise ReplicaUnusable("lagging")
            replica.status, replica.error, replica.down_until = "ok", None, 0.0
            metrics.DB_REPLICA_UP.labels(replica=replica.name).set(1)
            if replica.replayed >= floor:
                return replica.replayed
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ReplicaUnusable("behind_client")
            await asyncio.sleep(min(pause, remaining))
            pause = min(pause * 2, 0.1)

    async def probe(self) -> list[dict]:
        """Each replica's state for /health (a down one is tried again here, whatever its circuit says)."""
        for replica in self.replicas:
            try:
                async with replica.engine.connect() as conn:
                    await self._ready(replica, conn, 0)
            except ReplicaUnusable:
                pass
            except (SQLAlchemyError, OSError, TimeoutError) as exc:
                replica.trip("down", type(exc).__name__)
        return [replica.report() for replica in self.replicas]

    async def close(self) -> None:
        for replica in self.replicas:
            await replica.engine.dispose()
