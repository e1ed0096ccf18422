"""Graph and vector retrieval per mode, on one read transaction.

local  — entities by the low-level keyword vector, then their edges ranked by (edge degree, weight);
global — relations by the high-level keyword vector, then the entities at their ends;
hybrid — both, merged round-robin without duplicates; mix adds chunk vector search; naive is chunks only.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from app.domain.chunk_selection import candidate_lists, pick_by_vector, pick_by_weighted_polling, round_robin
from app.domain.hits import ChunkHit, EntityHit, GraphHits
from app.repositories import retrieval as repo


class Retriever:
    """Stateless helpers bound to one connection (inside a transaction) and one project."""

    def __init__(self, conn: AsyncConnection, project_id: str, *, min_similarity: float) -> None:
        self.conn = conn
        self.project_id = project_id
        self.min_similarity = min_similarity

    async def local(self, ll_vec: list[float], top_k: int, relation_limit: int) -> GraphHits:
        entities = await repo.search_entities(self.conn, self.project_id, ll_vec, top_k, self.min_similarity)
        edges = await repo.relations_of_entities(self.conn, self.project_id, [e.key for e in entities],
                                                 relation_limit)
        return GraphHits(entities, edges)

    async def global_(self, hl_vec: list[float], top_k: int) -> GraphHits:
        found = await repo.search_relations(self.conn, self.project_id, hl_vec, top_k, self.min_similarity)
        entities: dict[str, EntityHit] = {}
        for _, *ends in found:  # the ends, in order of appearance (source, then target)
            for end in ends:
                entities.setdefault(end.key, end)
        return GraphHits(list(entities.values()), [relation for relation, *_ in found])

    async def vector_chunks(self, query_vec: list[float], limit: int) -> list[ChunkHit]:
        return await repo.search_chunks(self.conn, self.project_id, query_vec, limit, self.min_similarity)

    async def attach_sources(self, hits: GraphHits) -> None:
        by_entity, by_pair = await repo.source_chunk_ids(
            self.conn, self.project_id, [e.key for e in hits.entities], [r.pair for r in hits.relations]
        )
        for e in hits.entities:
            e.chunk_ids = by_entity.get(e.key, [])
        for r in hits.relations:
            r.chunk_ids = by_pair.get(r.pair, [])

    async def graph_chunk_ids(
        self, hits: GraphHits, method: str, related: int, query_vec: list[float] | None
    ) -> tuple[list[str], list[str]]:
        """Chunk ids picked from the entities, then from the relations (minus those already picked)."""
        distances: dict[str, float] | None = None
        if method == "vector" and query_vec is not None:
            every = list(dict.fromkeys(c for item in (*hits.entities, *hits.relations) for c in item.chunk_ids))
            distances = await repo.chunk_distances(self.conn, self.project_id, every, query_vec)
        entity_ids = _pick(candidate_lists([e.chunk_ids for e in hits.entities]), related, distances)
        relation_lists = candidate_lists([r.chunk_ids for r in hits.relations], exclude=entity_ids)
        return entity_ids, _pick(relation_lists, related, distances)

    async def merged_chunks(
        self, vector: list[ChunkHit], entity_ids: list[str], relation_ids: list[str], limit: int | None
    ) -> list[ChunkHit]:
        """Round-robin merge (vector, entity, relation, as official LightRAG does); only the first `limit` chunks
        (None = all, e.g. for rerank) are loaded, so unused chunk texts never leave the database."""
        tagged = round_robin([(c.id, "vector") for c in vector], [(i, "entity") for i in entity_ids],
                             [(i, "relation") for i in relation_ids], key=lambda item: item[0])
        if limit is not None:
            tagged = tagged[:limit]
        by_id = {c.id: c for c in vector}
        stored = await repo.chunks_by_ids(self.conn, self.project_id,
                                          {i: source for i, source in tagged if i not in by_id})
        out: list[ChunkHit] = []
        for chunk_id, _ in tagged:
            if chunk_id in by_id:
                out.append(by_id[chunk_id])
            elif chunk_id in stored:
                out.append(stored[chunk_id])
        return out


def _pick(lists: list[list[str]], related: int, distances: dict[str, float] | None) -> list[str]:
    """VECTOR when distances are given (falls back to WEIGHT if a candidate has no vector), else WEIGHT."""
    if not any(lists):
        return []
    if distances is not None:
        picked = pick_by_vector(lists, distances, related)
        if picked:
            return picked
    return pick_by_weighted_polling(lists, related)


def merge_graph_hits(local: GraphHits, global_: GraphHits) -> GraphHits:
    """Hybrid: local[i] then global[i], entities deduplicated by key and relations by pair."""
    return GraphHits(
        round_robin(local.entities, global_.entities, key=lambda e: e.key),
        round_robin(local.relations, global_.relations, key=lambda r: r.pair),
    )
