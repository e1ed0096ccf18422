"""The one locking protocol of graph writes (`locked_keys`: per-entity gate, transaction, advisory key
locks), the gate itself, and the base the curation services share."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncConnection

from app.container import Container
from app.core import metrics
from app.db.engine import Database
from app.repositories import graph as graph_repo
from app.services.graph.inputs import name_key
from app.services.graph.lookups import resolve_key
from app.services.projects import require_project


@dataclass
class _Gate:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


_GATES: dict[tuple[int, str, str], _Gate] = {}


@asynccontextmanager
async def entity_gate(db: Database, project_id: str, keys: Iterable[str]) -> AsyncIterator[None]:
    """One curation write (edit, merge, document deletion) at a time per entity key in this process.

    Requests on the same entity queue here without a pooled connection, instead of each holding one
    while it waits for the database advisory lock: a queue of them no longer fills the pool that the
    lock holder, `/health` and ingestion need. Keys are taken in sorted order and always before any
    transaction begins, so gates and advisory locks never wait on each other in a cycle.
    """
    idents = [(id(db), project_id, k) for k in sorted(set(keys))]
    gates = [_GATES.setdefault(ident, _Gate()) for ident in idents]
    for gate in gates:
        gate.users += 1
    held: list[_Gate] = []
    try:
        for gate in gates:
            await gate.lock.acquire()
            held.append(gate)
        yield
    finally:
        for gate in held:
            gate.lock.release()
        for ident, gate in zip(idents, gates, strict=True):
            gate.users -= 1
            if not gate.users:
                del _GATES[ident]


@asynccontextmanager
async def locked_keys(
    db: Database,
    project_id: str,
    keys: Iterable[str],
    *,
    gate: bool = True,
    first: Callable[[AsyncConnection], Awaitable[object]] | None = None,
    step: str | None = None,
) -> AsyncIterator[AsyncConnection]:
    """A transaction holding the locks of every entity key a graph write touches (relations: both ends).

    In this order: the in-process gate on `keys` (entity_gate), a transaction, `first(conn)` (what must be
    checked or row-locked before the key locks: the project's existence, a document's claim or rows), then
    the transaction-scoped advisory locks of `keys` in sorted order (graph_repo.lock_keys). Every writer
    takes them in this order, so none waits on another in a cycle.

    `gate=False`: the caller holds the gate already, around planning done outside the transaction and the
    retries of it (curation writes that embed first, merges, deletions), or is the ingestion pipeline,
    which queues on the advisory locks alone. `step`: the wait for the locks and, once committed, the time
    they were held are counted under that name (pipeline_key_lock_seconds_total).
    """
    keys = sorted(set(keys))
    async with AsyncExitStack() as stack:
        if gate:
            await stack.enter_async_context(entity_gate(db, project_id, keys))
        async with db.transaction() as conn:
            if first is not None:
                await first(conn)
            started = time.perf_counter()
            await graph_repo.lock_keys(conn, project_id, keys)
            locked = time.perf_counter()
            if step is not None:
                metrics.KEY_LOCK_SECONDS.labels(step, "wait").inc(locked - started)
            yield conn
        if step is not None:
            metrics.KEY_LOCK_SECONDS.labels(step, "held").inc(time.perf_counter() - locked)


def project_exists(project_id: str) -> Callable[[AsyncConnection], Awaitable[None]]:
    """A `first` for locked_keys: 404 unless the project exists, checked in the transaction."""

    async def check(conn: AsyncConnection) -> None:
        await require_project(conn, project_id)

    return check


class CurationBase:
    """What every curation service holds: the container, its database and the name-length rule."""

    def __init__(self, c: Container) -> None:
        self.c = c
        self.db = c.db
        self.max_name = c.settings.entity_name_max_length

    def _key(self, name: str) -> str:
        return name_key(name, self.max_name)

    async def _resolve(self, conn: AsyncConnection, project_id: str, name: str) -> str:
        """The key of the entity `name` names, directly or as an alias."""
        return await resolve_key(conn, project_id, self._key(name))

    def _gate(self, project_id: str, keys: Iterable[str]) -> AbstractAsyncContextManager[None]:
        return entity_gate(self.db, project_id, keys)

    def _locked(
        self, project_id: str, keys: Iterable[str], *, gate: bool = True
    ) -> AbstractAsyncContextManager[AsyncConnection]:
        """locked_keys for a curation write: the project must exist, checked in the transaction."""
        return locked_keys(self.db, project_id, keys, gate=gate, first=project_exists(project_id))
