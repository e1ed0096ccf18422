"""A query's reads that its two connections share, remembered for the rest of the query: provenance and the
question's nearest chunks.

The chunk ids of an entity or a relation are read up to three times per hybrid or mix query: by each side's
chunk ranking and again for the entities and relations kept in the context, with many keys in common (about
a quarter of the entities and half of the relations on the big-corpus bench). Every read of a query sees one
snapshot (`repositories/retrieval.py::open_query_reads`), so a key read once has the same answer for the
whole query: later reads ask only for the keys not read yet, and a read made while the other side's is
running waits for the keys that one is bringing. A hub's provenance is thousands of rows.

Both sides of hybrid and mix walk from the same question's nearest chunks (`graph_chunks.ranked_chunk_ids`),
at the same time on their two connections: the first side to need them reads them and the other waits for
that read instead of running the same search again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncConnection

from app.repositories import neighbourhood
from app.repositories import retrieval as repo

Pair = tuple[str, str]
Nearest = list[tuple[str, float, list[str]]]
T = TypeVar("T")


class QueryProvenance:
    """Per query (never shared between queries: another query may see another snapshot)."""

    def __init__(self, project_id: str) -> None:
        self.project_id = project_id
        self._entities: dict[str, list[str]] = {}
        self._pairs: dict[Pair, list[str]] = {}
        self._nearest: dict[tuple, asyncio.Future[Nearest]] = {}
        # keys and pairs being read right now, each with the read that will bring it
        self._reading: dict[str | Pair, asyncio.Future[None]] = {}

    async def read(
        self, conn: AsyncConnection, keys: list[str], pairs: list[Pair]
    ) -> tuple[dict[str, list[str]], dict[Pair, list[str]]]:
        """As `repositories.retrieval.source_chunk_ids`; each list is the caller's own copy. Keys the other
        side's read is bringing right now (both sides' walks rank many of the same hubs) are awaited from it,
        not read twice."""
        new_keys = [k for k in dict.fromkeys(keys) if k not in self._entities and k not in self._reading]
        new_pairs = [p for p in dict.fromkeys(pairs) if p not in self._pairs and p not in self._reading]
        others = {self._reading[x] for x in (*keys, *pairs) if x in self._reading}
        if new_keys or new_pairs:
            await _settle(self._read(conn, new_keys, new_pairs), [*new_keys, *new_pairs], self._reading)
        for other in others:  # shielded, as in `nearest_chunks`
            await asyncio.shield(other)
        return {k: list(self._entities[k]) for k in keys}, {p: list(self._pairs[p]) for p in pairs}

    async def _read(self, conn: AsyncConnection, keys: list[str], pairs: list[Pair]) -> None:
        by_entity, by_pair = await repo.source_chunk_ids(conn, self.project_id, keys, pairs)
        self._entities.update(by_entity)
        self._pairs.update(by_pair)

    async def nearest_chunks(
        self, conn: AsyncConnection, vec: list[float], limit: int, max_distance: float, per_chunk: int
    ) -> Nearest:
        """As `repositories.neighbourhood.nearest_chunk_entities`, read once per query and arguments (the
        caller gets its own lists). A caller arriving while another's read runs waits for it."""
        key = (tuple(vec), limit, max_distance, per_chunk)
        if key not in self._nearest:
            search = neighbourhood.nearest_chunk_entities(conn, self.project_id, vec, limit, max_distance, per_chunk)
            found = await _settle(search, [key], self._nearest, keep=True)
        else:  # shielded: a waiter cancelled with its side must not cancel the read the other side waits for
            found = await asyncio.shield(self._nearest[key])
        return [(chunk_id, distance, list(keys)) for chunk_id, distance, keys in found]


async def _settle(read: Awaitable[T], names: list, pending: dict, *, keep: bool = False) -> T:
    """Run `read`, announcing it under `names` in `pending` meanwhile (as a future other callers may await),
    and settle that future with its outcome. The names stay (holding the answer) if `keep`; a failed read's
    names are always dropped, so a later caller reads again."""
    future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
    pending.update(dict.fromkeys(names, future))
    try:
        result = await read
    except BaseException as error:
        for name in names:
            pending.pop(name, None)
        if isinstance(error, asyncio.CancelledError):
            future.cancel()
        else:
            future.set_exception(error)
            future.exception()  # a waiter takes it, if any; none need not be warned of
        raise
    if not keep:
        for name in names:
            pending.pop(name, None)
    future.set_result(result)
    return result
