"""The chunks of one search side ranked by graph, vector and full-text evidence together (QUERY_GRAPH_RANK).

The side's entities seed a personalised PageRank over the edges within two hops of them; every chunk citing
a well-ranked entity, or one of the side's relations, scores that rank; the candidates are then fused by
weighted reciprocal rank with their closeness to the question and their full-text rank (down-weighted: a
question's words also match passages that merely share its vocabulary). A chunk reached only through an
entity two hops away can so be chosen, which the per-entity picks of LightRAG never do. Last, the passage of
a two-hop question's bridge entity moves up to second place (`with_second_hop`).
"""

from __future__ import annotations

from collections.abc import Mapping

from app.domain.graph_rank import Edge, chunk_scores, personalized_pagerank, ranked, weighted_rrf
from app.domain.hits import ChunkHit, GraphHits
from app.domain.rank_fusion import interleave
from app.repositories import neighbourhood
from app.services.query.retrieval import Retriever

RANKED_ENTITIES = 40  # entities (best PageRank first) whose chunks become candidates
CANDIDATES = 60  # chunks (best graph score first) weighed against the question
# The local side weighs every chunk its ranked entities cite, as LightRAG weighs every chunk of its context's
# entities: a cut by graph score first hid the chunks of well-connected entities (each holds a small share of
# the entity's rank) from the vector and full-text evidence, and those are the ones a question about a broad
# topic needs. Bounded only so a hub-heavy graph keeps the evidence query small.
LOCAL_CANDIDATES = 200
GRAPH_WEIGHT = 1.0
VECTOR_WEIGHT = 1.0
LEXICAL_WEIGHT = 0.5


CHUNK_SEEDS = 5  # the question's nearest chunks, seeded as passage nodes of the walk
CHUNK_ENTITIES = 20  # entities of each such chunk linked to its node
PASSAGE_SHARE = 0.5  # the passage nodes' share of the walk's restarts
PASSAGE = "\x00passage:"  # prefix of a passage node (no entity key holds a NUL)

SEEDS = 12  # entities the walk restarts from: the side's leading ones, then its best searched ones


def seed_weights(hits: GraphHits) -> dict[str, float]:
    """The side's leading entities weigh 1; the others fall off with their rank. The walk's cost grows with
    the seeds (each brings its edges and their other ends'), so only the first SEEDS entities seed it."""
    seeds: dict[str, float] = {}
    for i, e in enumerate(hits.entities[: max(SEEDS, min(hits.lead_entities, 2 * SEEDS))]):
        weight = 1.0 if i < hits.lead_entities else 1.0 / (2 + i - hits.lead_entities)
        seeds[e.key] = max(seeds.get(e.key, 0.0), weight)
    return seeds


def passage_node(chunk_id: str) -> str:
    return PASSAGE + chunk_id


def is_passage(node: str) -> bool:
    return node.startswith(PASSAGE)


def with_passage_seeds(
    seeds: dict[str, float], nearest: list[tuple[str, float, list[str]]]
) -> tuple[dict[str, float], list[Edge]]:
    """The entity seeds and the nearest chunks' passage nodes (each weighed by its closeness to the question),
    the passages holding PASSAGE_SHARE of the restarts when there are entity seeds too; and the edges from
    each passage node to its entities."""
    passages = {passage_node(c): max(1.0 - d, 1e-6) for c, d, _ in nearest}
    if not passages:
        return seeds, []
    entity_total, passage_total = sum(seeds.values()), sum(passages.values())
    out = {k: (1 - PASSAGE_SHARE) * w / entity_total for k, w in seeds.items()} if entity_total > 0 else {}
    share = PASSAGE_SHARE if out else 1.0
    out |= {k: share * w / passage_total for k, w in passages.items()}
    edges = [(passage_node(c), key, 1.0) for c, _, keys in nearest for key in keys]
    return out, edges


async def ranked_chunk_ids(
    r: Retriever, hits: GraphHits, query: str, query_vec: list[float], candidates: int = CANDIDATES
) -> list[str]:
    """The side's candidate chunks (the `candidates` best by graph score), best first by all evidence."""
    seeds = seed_weights(hits)
    nearest = await r.nearest_chunks(query_vec, CHUNK_SEEDS, CHUNK_ENTITIES)
    if not seeds and not nearest:
        return []
    seeds, passage_edges = with_passage_seeds(seeds, nearest)
    # the walk's two hops start from the entity seeds only: a passage's entities are one edge from its node, so
    # a bridge entity gets mass through it, and its chunks are scored by that mass without its own neighbourhood
    keys = [k for k in seeds if not is_passage(k)]
    edges = await neighbourhood.neighbourhood_edges(r.conn, r.project_id, keys) if keys else []
    edges += [(rel.src_key, rel.tgt_key, rel.weight) for rel in hits.relations] + passage_edges
    ranks = personalized_pagerank(edges, seeds)
    entity_keys = [k for k in ranked(ranks, list(seeds)) if not is_passage(k)][:RANKED_ENTITIES]
    pairs = [rel.pair for rel in hits.relations]
    by_entity, by_pair = await r.sources(entity_keys, pairs)
    relation_ranks = {pair: (ranks.get(pair[0], 0.0) + ranks.get(pair[1], 0.0)) / 2 for pair in pairs}
    scores = chunk_scores(ranks, by_entity)
    for chunk_id, score in chunk_scores(relation_ranks, by_pair).items():
        scores[chunk_id] = scores.get(chunk_id, 0.0) + score
    for chunk_id, _, _ in nearest:
        scores[chunk_id] = scores.get(chunk_id, 0.0) + ranks.get(passage_node(chunk_id), 0.0)
    graph = ranked(scores)[:candidates]
    words = await r.searchable("chunks", [query]) if r.plan.lexical else []
    evidence = await neighbourhood.chunk_evidence(r.conn, r.project_id, graph, query_vec, words)
    distances = {c: e.distance for c, e in evidence.items() if e.distance is not None}
    vector = sorted((c for c in graph if c in distances), key=lambda c: distances[c])
    lexical = sorted(
        (c for c in graph if c in evidence and evidence[c].lexical > 0), key=lambda c: -evidence[c].lexical
    )
    fused = weighted_rrf([(graph, GRAPH_WEIGHT), (vector, VECTOR_WEIGHT), (lexical, LEXICAL_WEIGHT)], k=r.plan.rrf_k)
    order = [str(c) for c in fused if c in evidence]
    held = {c: set(e.words) for c, e in evidence.items()}
    return with_second_hop(order, held, by_entity, {c: e.document for c, e in evidence.items()})


# The second hop is looked for among the side's first chunks only: on HotpotQA the missing passage of a two-hop
# question ranked 3rd to 16th (most within the first 10), and a deeper chunk holding a word of the question was
# noise.
SECOND_HOP_WINDOW = 15
# A bridge entity is specific: the first passage names it and its own passage is about it, so few chunks cite it.
# Through a broad entity (a disease most chunks of a medical text cite) every chunk is linked, and the move
# became a mere "most words" pick, which cost Medical's tight budget.
BRIDGE_CHUNKS = 3


def with_second_hop(
    order: list[str], words: Mapping[str, set[str]], cited: Mapping[str, list[str]], documents: Mapping[str, str]
) -> list[str]:
    """The second hop of a two-hop question: among the first SECOND_HOP_WINDOW chunks of `order`, the one of
    another document (`documents`: chunk id → its document) sharing with the first chunk an entity at most
    BRIDGE_CHUNKS chunks cite (`cited`: entity key → the chunks citing it) and holding most of the question's
    words the first chunk lacks (`words`: chunk id → the question's words it holds; the earlier one on a tie)
    moves up to second place. The first chunk answers the question's first hop; the passage about the entity it
    names (the bridge) holds the rest of the question's words, and it ranks only middling by every evidence,
    since the question never names that entity. The hop crosses documents: within one document the entities
    its chunks share are its own subject, not a bridge (on a corpus of one long document, GraphRAG-Bench's
    Medical, every move the step made there lost coverage)."""
    if len(order) < 3:
        return order
    first = order[0]
    lacking = {w for c in order for w in words.get(c, ())} - words.get(first, set())
    linked = {c for ids in cited.values() if first in ids and len(set(ids)) <= BRIDGE_CHUNKS for c in ids}
    best, most = None, 0
    home = documents.get(first)
    for chunk_id in order[1:SECOND_HOP_WINDOW]:
        crosses = chunk_id in linked and documents.get(chunk_id) != home
        held = len(words.get(chunk_id, set()) & lacking) if crosses else 0
        if held > most:
            best, most = chunk_id, held
    if best is None or best == order[1]:
        return order
    return [first, best, *(c for c in order[1:] if c != best)]


def fused_chunk_order(local: GraphHits, global_: GraphHits, searched: list[ChunkHit]) -> list[tuple[str, str]]:
    """Hybrid and mix: the searched chunks' ranking and the two sides' chunk rankings interleaved by best rank
    (`domain/rank_fusion.py::interleave`), a chunk several of them rank alike first. So the first n chunks hold
    each ranking's best n/3, and a passage only one of them finds keeps its place: summed reciprocal ranks put
    chunks every ranking holds middling first, and the sides taken in turn without the searched chunks fell
    below naive on multi-hop questions (bench/multihop). As (chunk id, how it was found: "vector" searched,
    "entity" the local side, "relation" the global side)."""
    sides = [([c.id for c in searched], "vector"), (local.chunk_ids, "entity"), (global_.chunk_ids, "relation")]
    source: dict[str, str] = {}
    for ids, name in sides:
        for chunk_id in ids:
            source.setdefault(chunk_id, name)
    return [(str(c), source[str(c)]) for c in interleave([ids for ids, _ in sides])]
