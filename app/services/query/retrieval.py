"""Graph and chunk retrieval; which searches a query runs and how they rank is its plan
(`domain/query_plan.py`). A Retriever works on one connection (the sides of hybrid and mix may use two at once,
see ContextBuilder).

local  — entities named exactly by a low-level keyword (always found), then the vector and full-text
         entity searches fused by reciprocal rank; when several entities are named, the paths of length two
         between them; then the edges, those of the named entities first, the rest by closeness to the query;
global — relations by the high-level keyword vector, by the whole question's vector (QUERY_GRAPH_RANK) and by
         full-text (keyword-column matches, i.e. the asked themes, first; the low-level keywords too when no
         theme matched), fused by reciprocal rank with a mild weight factor; then the entities at their ends;
hybrid — both, each side's leading items (see `GraphHits`) first, the rest round-robin; mix adds the chunk
         searches (vector and full-text, fused); naive is chunks only.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from app.domain.chunk_diversity import SPARE_CHUNKS, distinct_first
from app.domain.chunk_selection import candidate_lists, pick_by_vector, pick_by_weighted_polling, round_robin
from app.domain.hits import ChunkHit, EntityHit, GraphHits, RelationHit
from app.domain.names import entity_key
from app.domain.query_plan import QueryPlan
from app.domain.rank_fusion import fuse, priority_merge, weight_factor
from app.domain.search_terms import search_terms
from app.repositories import lexical
from app.repositories import retrieval as repo
from app.repositories.common_words import CommonWords
from app.services.query.provenance import Nearest, QueryProvenance

MAX_PATHS = 50  # connecting paths between named entities considered per query (the budget cuts further)


class Retriever:
    """Stateless helpers bound to one connection (inside a transaction), one project and one query's plan."""

    def __init__(
        self,
        conn: AsyncConnection,
        project_id: str,
        plan: QueryPlan,
        common_words: CommonWords,
        provenance: QueryProvenance | None = None,
    ) -> None:
        self.conn = conn
        self.project_id = project_id
        self.plan = plan
        self.common_words = common_words
        self.provenance = provenance or QueryProvenance(project_id)  # shared by the query's two connections

    async def searchable(self, table: str, texts: list[str]) -> list[str]:
        """The words of `texts` worth a full-text search of `table` (common ones left out)."""
        return await self.common_words.searchable(self.conn, self.project_id, table, search_terms(texts))

    async def local(
        self, ll: list[str], ll_vec: list[float], query_vec: list[float], top_k: int, relation_limit: int
    ) -> GraphHits:
        """`ll_vec` finds the entities; `query_vec` (the whole question) ranks the edges. The lead: entities
        the keywords name, the entities connecting them, their neighbours; their edges and paths."""
        keys = list(dict.fromkeys(entity_key(k) for k in ll if k.strip()))
        named = await lexical.named_entities(self.conn, self.project_id, keys)
        searched = await self._searched_entities(ll, ll_vec, top_k, {e.key for e in named})
        path_relations, connecting = await self._paths(named, relation_limit)
        lead = [*named, *connecting]
        lead_keys = {e.key for e in lead}
        entities = lead + [e for e in searched if e.key not in lead_keys][: max(0, top_k - len(lead))]

        edges = await repo.relations_of_entities(
            self.conn, self.project_id, [e.key for e in entities], relation_limit, query_vec, anchored=len(named)
        )
        path_pairs = {r.pair for r in path_relations}
        named_keys = {e.key for e in named}
        relations = path_relations + [r for r in edges if r.pair not in path_pairs]
        leading = [r for r in relations if r.pair in path_pairs or not named_keys.isdisjoint(r.pair)]
        lead += await self._neighbours(leading, lead_keys, entities)
        lead_keys = {e.key for e in lead}
        # top_k bounds the entities, neighbours included: searched ones make room, and their edges go with them
        entities = lead + [e for e in entities if e.key not in lead_keys][: max(0, top_k - len(lead))]
        kept = {e.key for e in entities}
        relations = leading + [r for r in relations[len(leading) :] if not kept.isdisjoint(r.pair)]
        return GraphHits(entities, relations, lead_entities=len(lead), lead_relations=len(leading))

    async def _searched_entities(
        self, ll: list[str], ll_vec: list[float], top_k: int, exclude: set[str]
    ) -> list[EntityHit]:
        """The vector search and (when on) the full-text search, fused by reciprocal rank."""
        found = [await repo.search_entities(self.conn, self.project_id, ll_vec, top_k, self.plan.min_similarity)]
        if self.plan.lexical:
            words = await self.searchable("entities", ll)
            found.append(await lexical.search_entities(self.conn, self.project_id, words, top_k))
        return [e for e, _ in fuse(found, key=lambda e: e.key, k=self.plan.rrf_k) if e.key not in exclude]

    async def _paths(self, named: list[EntityHit], limit: int) -> tuple[list[RelationHit], list[EntityHit]]:
        """Between several named entities: the relations of their direct edges and 2-paths, and the middles."""
        if len(named) < 2:
            return [], []
        pairs, mids = await lexical.connecting_paths(
            self.conn, self.project_id, [e.key for e in named], min(MAX_PATHS, limit)
        )
        return (
            await lexical.relations_by_pairs(self.conn, self.project_id, pairs),
            await lexical.entities_by_keys(self.conn, self.project_id, mids),
        )

    async def _neighbours(
        self, leading: list[RelationHit], lead_keys: set[str], loaded: list[EntityHit]
    ) -> list[EntityHit]:
        """The other ends of the leading relations, in relation order: part of what is known about a named
        entity, so they are shown as entities too."""
        keys = list(dict.fromkeys(k for r in leading for k in r.pair if k not in lead_keys))
        known = {e.key: e for e in loaded}
        missing = [k for k in keys if k not in known]
        known.update({e.key: e for e in await lexical.entities_by_keys(self.conn, self.project_id, missing)})
        return [known[k] for k in keys if k in known]

    async def global_(  # noqa: PLR0913
        self,
        hl: list[str],
        hl_vec: list[float],
        top_k: int,
        relation_limit: int,
        query_vec: list[float] | None = None,
        ll: list[str] | None = None,
    ) -> GraphHits:
        """Relations by the high-level keywords' vector, by the whole question's vector (generic keywords such as
        "place of birth" say little, the question says more) and by full text; when no keyword phrase names
        a relation's theme, the full-text search also takes the low-level keywords."""
        vector = await repo.search_relations(self.conn, self.project_id, hl_vec, top_k, self.plan.min_similarity)
        found = [[(relation, src, tgt) for relation, src, tgt in vector]]
        if query_vec is not None and self.plan.graph_rank:
            asked = await repo.search_relations(self.conn, self.project_id, query_vec, top_k, self.plan.min_similarity)
            found.append([(relation, src, tgt) for relation, src, tgt in asked])
        themed: set[tuple[str, str]] = set()
        if self.plan.lexical:
            words = await self.searchable("relations", hl)
            matches = await lexical.search_relations(self.conn, self.project_id, hl, words, relation_limit)
            themed = {relation.pair for relation, _, _, theme in matches if theme}
            if not themed and ll and self.plan.graph_rank:
                named = await self.searchable("relations", ll)
                matches += await lexical.search_relations(self.conn, self.project_id, [], named, relation_limit)
            found.append([(relation, src, tgt) for relation, src, tgt, _ in matches])
        fused = [
            item
            for item, _ in fuse(
                found,
                key=lambda item: item[0].pair,
                k=self.plan.rrf_k,
                boost=lambda item: weight_factor(item[0].weight),
            )
        ]
        ranked = [item for item in fused if item[0].pair in themed] + [
            item for item in fused if item[0].pair not in themed
        ]
        ranked = ranked[: max(top_k, len(themed))]
        entities: dict[str, EntityHit] = {}
        lead_entities = 0
        for i, (_, *ends) in enumerate(ranked):  # the ends, in order of appearance (source, then target)
            for end in ends:
                entities.setdefault(end.key, end)
            if i < len(themed):
                lead_entities = len(entities)
        return GraphHits(
            list(entities.values()),
            [relation for relation, *_ in ranked],
            lead_entities=lead_entities,
            lead_relations=len(themed),
        )

    async def search_chunks(self, query: str, query_vec: list[float], limit: int) -> list[ChunkHit]:
        """The chunk vector search, fused with the full-text chunk search when that is on (ranked by density
        when the plan says so, see `lexical.search_chunks`)."""
        vector = await repo.search_chunks(self.conn, self.project_id, query_vec, limit, self.plan.min_similarity)
        if not self.plan.lexical:
            return vector
        words = await self.searchable("chunks", [query])
        found = await lexical.search_chunks(self.conn, self.project_id, words, limit, self.plan.chunks_by_density)
        return [c for c, _ in fuse([vector, found], key=lambda c: c.id, k=self.plan.rrf_k)][:limit]

    async def nearest_chunks(self, query_vec: list[float], limit: int, per_chunk: int) -> Nearest:
        """The `limit` chunks nearest to the question (within the plan's similarity) and the keys of (at most
        `per_chunk` of) the entities each cites, nearest first: read once per query, whichever side asks first."""
        max_distance = 1.0 - self.plan.min_similarity
        return await self.provenance.nearest_chunks(self.conn, query_vec, limit, max_distance, per_chunk)

    async def sources(
        self, keys: list[str], pairs: list[tuple[str, str]]
    ) -> tuple[dict[str, list[str]], dict[tuple[str, str], list[str]]]:
        """Chunk ids (insertion order) of each entity key and relation pair, each read once per query."""
        return await self.provenance.read(self.conn, keys, pairs)

    async def attach_sources(self, hits: GraphHits) -> None:
        by_entity, by_pair = await self.sources([e.key for e in hits.entities], [r.pair for r in hits.relations])
        for e in hits.entities:
            e.chunk_ids = by_entity.get(e.key, [])
        for r in hits.relations:
            r.chunk_ids = by_pair.get(r.pair, [])

    async def graph_chunk_ids(
        self, hits: GraphHits, related: int, query_vec: list[float] | None
    ) -> tuple[list[str], list[str]]:
        """Chunk ids picked from the entities, then from the relations (minus those already picked), as the
        plan's chunk selection says."""
        distances: dict[str, float] | None = None
        if self.plan.chunk_selection == "vector" and query_vec is not None:
            chunk_lists = [e.chunk_ids for e in hits.entities] + [r.chunk_ids for r in hits.relations]
            every = list(dict.fromkeys(c for ids in chunk_lists for c in ids))
            distances = await repo.chunk_distances(self.conn, self.project_id, every, query_vec)
        entity_ids = _pick(candidate_lists([e.chunk_ids for e in hits.entities]), related, distances)
        relation_lists = candidate_lists([r.chunk_ids for r in hits.relations], exclude=entity_ids)
        return entity_ids, _pick(relation_lists, related, distances)

    async def merged_chunks(
        self, vector: list[ChunkHit], entity_ids: list[str], relation_ids: list[str], limit: int | None
    ) -> list[ChunkHit]:
        """Round-robin merge (vector, entity, relation, as official LightRAG does)."""
        tagged = round_robin(
            [(c.id, "vector") for c in vector],
            [(i, "entity") for i in entity_ids],
            [(i, "relation") for i in relation_ids],
            key=lambda item: item[0],
        )
        return await self.load_chunks(vector, tagged, limit)

    async def load_chunks(
        self, searched: list[ChunkHit], tagged: list[tuple[str, str]], limit: int | None
    ) -> list[ChunkHit]:
        """The chunks of `tagged` (id, how it was found) in order, at most `limit` (None = all, e.g. for rerank):
        near-duplicates of better-ranked ones give way to the next ones (`domain/chunk_diversity.py`). Only the
        first `limit` + SPARE_CHUNKS are loaded, so unused chunk texts never leave the database. `searched` are
        loaded already."""
        if limit is not None:
            tagged = tagged[: limit + SPARE_CHUNKS]
        by_id = {c.id: c for c in searched}
        stored = await repo.chunks_by_ids(
            self.conn, self.project_id, {i: source for i, source in tagged if i not in by_id}
        )
        out: list[ChunkHit] = []
        for chunk_id, _ in tagged:
            if chunk_id in by_id:
                out.append(by_id[chunk_id])
            elif chunk_id in stored:
                out.append(stored[chunk_id])
        return out if limit is None else distinct_first(out, limit)


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
    """Hybrid: the leading items of local, then those of global, then the rest round-robin (local[i], global[i]),
    entities deduplicated by key and relations by pair. The lead counts of the merged list say how many of
    its first items came from a lead."""
    entities = priority_merge(
        [(local.entities, local.lead_entities), (global_.entities, global_.lead_entities)], key=lambda e: e.key
    )
    relations = priority_merge(
        [(local.relations, local.lead_relations), (global_.relations, global_.lead_relations)], key=lambda r: r.pair
    )
    lead_entity_keys = {
        e.key for e in (*local.entities[: local.lead_entities], *global_.entities[: global_.lead_entities])
    }
    lead_pairs = {
        r.pair for r in (*local.relations[: local.lead_relations], *global_.relations[: global_.lead_relations])
    }
    return GraphHits(entities, relations, lead_entities=len(lead_entity_keys), lead_relations=len(lead_pairs))
