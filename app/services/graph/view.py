"""Subgraph for display: breadth-first from one entity (or the highest-degree entities for `*`), bounded
by depth and node count. Each depth is one set-based query that prefers high-degree neighbours, so the
whole graph is never loaded (sorting every node in memory for `*` does not scale).

A large subgraph (10,000 nodes is 10-15 MB of JSON) is read here, on the event loop, but shaped and encoded by
`graph_json` in a worker thread (see app/web/graph_answers.py): building and serialising it is CPU work of a second
that would otherwise stall every other request."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.container import Container
from app.domain.json_slices import json_object
from app.domain.names import lookup_key, sanitize
from app.domain.rows import EdgeRow, NodeRow
from app.domain.texts import readable
from app.repositories import graph_curation as repo
from app.schemas.graph import GraphOut
from app.services.graph.lookups import not_found, resolve_key
from app.services.projects import require_project


@dataclass(frozen=True)
class Subgraph:
    nodes: list[NodeRow]
    edges: list[EdgeRow]
    is_truncated: bool

    def names(self) -> dict[str, str]:
        return {n.key: n.name for n in self.nodes}


def graph_fields(sub: Subgraph, *, raw_descriptions: bool = False) -> dict[str, Any]:
    """GraphOut's fields as plain JSON values. Descriptions are shown as query contexts show them (`readable`:
    one fragment per line); `raw_descriptions` keeps the stored `<SEP>`-joined text (the LightRAG-compatible
    API returns that)."""
    names = sub.names()
    shown = (lambda d: d) if raw_descriptions else readable
    return {
        "nodes": [
            {"id": n.name, "entity_type": n.entity_type, "description": shown(n.description), "degree": n.degree}
            for n in sub.nodes
        ],
        "edges": [
            {
                "source": names[e.src_key],
                "target": names[e.tgt_key],
                "weight": float(e.weight),
                "keywords": e.keywords,
                "description": shown(e.description),
            }
            for e in sub.edges
        ],
        "is_truncated": sub.is_truncated,
    }


def graph_json(sub: Subgraph) -> bytes:
    """The body of GET /graph (a GraphOut): CPU-bound, run it in a worker thread."""
    return json_object(graph_fields(sub))


class GraphViewService:
    def __init__(self, c: Container) -> None:
        self.c = c

    async def subgraph(
        self, project_id: str, label: str, max_depth: int, max_nodes: int, *, raw_descriptions: bool = False
    ) -> GraphOut:
        sub = await self.rows(project_id, label, max_depth, max_nodes)
        return GraphOut.model_validate(graph_fields(sub, raw_descriptions=raw_descriptions))

    async def rows(self, project_id: str, label: str, max_depth: int, max_nodes: int) -> Subgraph:
        async with self.c.db.read() as conn:
            await require_project(conn, project_id)
            if label.strip() == "*":
                nodes = await repo.top_nodes(conn, project_id, max_nodes + 1)
                truncated = len(nodes) > max_nodes
                nodes = nodes[:max_nodes]
            else:
                key = lookup_key(sanitize(label), self.c.settings.entity_name_max_length)
                key = await resolve_key(conn, project_id, key) if key else key  # an alias starts at its entity
                start = await repo.get_entity(conn, project_id, key) if key else None
                if start is None:
                    raise not_found(label)
                node = NodeRow(start.key, start.name, start.entity_type, start.description, start.degree)
                nodes, truncated = await self._expand(conn, project_id, node, max_depth, max_nodes)
            edges = await repo.edges_among(conn, project_id, [n.key for n in nodes])
        return Subgraph(nodes, edges, truncated)

    @staticmethod
    async def _expand(
        conn, project_id: str, start: NodeRow, max_depth: int, max_nodes: int
    ) -> tuple[list[NodeRow], bool]:
        nodes = [start]
        visited = [start.key]
        frontier = [start.key]
        for _ in range(max_depth):
            room = max_nodes - len(nodes)
            found = await repo.neighbour_nodes(conn, project_id, frontier, visited, room + 1)
            if len(found) > room:
                return nodes + found[:room], True
            if not found:
                break
            nodes.extend(found)
            frontier = [n.key for n in found]
            visited.extend(frontier)
        return nodes, False
