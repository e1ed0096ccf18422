"""A query's provenance reads, remembered for the rest of the query.

The chunk ids of an entity or a relation are read up to three times per hybrid or mix query: by each side's
chunk ranking and again for the entities and relations kept in the context, with many keys in common (about
a quarter of the entities and half of the relations on the big-corpus bench). Every read of a query sees one
snapshot (`repositories/retrieval.py::open_query_reads`), so a key read once has the same answer for the
whole query: later reads ask only for the keys not read yet. A hub's provenance is thousands of rows.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from app.repositories import retrieval as repo

Pair = tuple[str, str]


class QueryProvenance:
    """Per query (never shared between queries: another query may see another snapshot)."""

    def __init__(self, project_id: str) -> None:
        self.project_id = project_id
        self._entities: dict[str, list[str]] = {}
        self._pairs: dict[Pair, list[str]] = {}

    async def read(
        self, conn: AsyncConnection, keys: list[str], pairs: list[Pair]
    ) -> tuple[dict[str, list[str]], dict[Pair, list[str]]]:
        """As `repositories.retrieval.source_chunk_ids`; each list is the caller's own copy."""
        new_keys = [k for k in dict.fromkeys(keys) if k not in self._entities]
        new_pairs = [p for p in dict.fromkeys(pairs) if p not in self._pairs]
        if new_keys or new_pairs:
            by_entity, by_pair = await repo.source_chunk_ids(conn, self.project_id, new_keys, new_pairs)
            self._entities.update(by_entity)
            self._pairs.update(by_pair)
        return {k: list(self._entities[k]) for k in keys}, {p: list(self._pairs[p]) for p in pairs}
