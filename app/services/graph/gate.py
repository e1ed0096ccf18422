"""The per-entity gate every curation write passes (edit, rename, merge, document deletion), and the
base the curation services share."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncConnection

from app.container import Container
from app.db.engine import Database
from app.services.graph.inputs import name_key
from app.services.graph.lookups import resolve_key


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
