"""The shortest chain of relations between two entities: breadth-first from both ends at once, one query
per hop, each hop's edges capped so a hub entity cannot pull the whole graph into memory."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncConnection

from app.container import Container
from app.domain.names import lookup_key, sanitize, sorted_pair
from app.repositories import graph_curation as curation_repo
from app.repositories import graph_paths as paths_repo
from app.schemas.graph import EntityOut, RelationOut
from app.services.graph.lookups import not_found, resolve_key
from app.services.graph.outputs import entity_out, relation_out
from app.services.projects import require_project

EDGES_PER_HOP = 5000


@dataclass(frozen=True)
class GraphPath:
    """`entities` in order from the start to the end, `relations` between each consecutive two; both empty
    when no chain of at most `max_hops` relations was found (`exhausted`: none exists at all, not only within
    the hop or edge limits)."""

    entities: list[EntityOut]
    relations: list[RelationOut]
    exhausted: bool


class PathService:
    def __init__(self, c: Container) -> None:
        self.c = c

    async def shortest(self, project_id: str, source: str, target: str, max_hops: int) -> GraphPath:
        async with self.c.db.read() as conn:
            await require_project(conn, project_id)
            start = await self._key(conn, project_id, source)
            end = await self._key(conn, project_id, target)
            keys, exhausted = await _meet(conn, project_id, start, end, max_hops)
            if not keys:
                return GraphPath([], [], exhausted)
            rows = await curation_repo.get_entities(conn, project_id, keys)
            pairs = [sorted_pair(a, b) for a, b in zip(keys, keys[1:], strict=False)]
            rels = {(r.src_key, r.tgt_key): r for r in await curation_repo.relations_by_pairs(conn, project_id, pairs)}
        return GraphPath([entity_out(rows[k]) for k in keys], [relation_out(rels[p]) for p in pairs], False)

    async def _key(self, conn: AsyncConnection, project_id: str, name: str) -> str:
        key = lookup_key(sanitize(name), self.c.settings.entity_name_max_length)
        key = await resolve_key(conn, project_id, key) if key else key
        if not key or await curation_repo.get_entity(conn, project_id, key) is None:
            raise not_found(name)
        return key


async def _meet(conn: AsyncConnection, project_id: str, start: str, end: str, max_hops: int) -> tuple[list[str], bool]:
    """The keys along a shortest path, or ([], whether the search ran out of graph rather than of limits)."""
    if start == end:
        return [start], False
    parents: tuple[dict[str, str | None], dict[str, str | None]] = ({start: None}, {end: None})
    frontiers = ([start], [end])
    capped = False
    for _ in range(max_hops):
        side = 0 if len(frontiers[0]) <= len(frontiers[1]) else 1  # grow the smaller side
        mine, other = parents[side], parents[1 - side]
        edges = await paths_repo.edges_touching(conn, project_id, frontiers[side], EDGES_PER_HOP + 1)
        capped = capped or len(edges) > EDGES_PER_HOP
        reached: list[str] = []
        frontier = set(frontiers[side])
        for src, tgt in edges[:EDGES_PER_HOP]:
            for here, there in ((src, tgt), (tgt, src)):
                if here in frontier and there not in mine:
                    mine[there] = here
                    reached.append(there)
                    if there in other:
                        forward = _walk(parents[0], there)[::-1]
                        return forward + _walk(parents[1], there)[1:], False
        if not reached:
            return [], not capped
        frontiers = (reached, frontiers[1]) if side == 0 else (frontiers[0], reached)
    return [], False


def _walk(parents: dict[str, str | None], key: str) -> list[str]:
    """`key`, its parent, its parent's parent, ... up to the side's root."""
    chain = [key]
    while (parent := parents[chain[-1]]) is not None:
        chain.append(parent)
    return chain
