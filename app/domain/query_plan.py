"""What a query searches, decided once per query: the query service, the context builder and the retriever
read this plan instead of testing the mode themselves.

Two steps, because keyword extraction sits between them: `plan_query` (mode, request, settings) says whether
the query retrieves at all, needs keywords, which graph sides its mode asks for, whether it searches chunks
and how everything found is ranked; `QueryPlan.sides` (once the keywords are known) says which sides really
run. A one-sided mode whose own keywords are missing searches the other side instead, so the query still
finds something; a side without keywords never runs.

How the sides merge is the same for every mode: each side's leading items first, then the rest round-robin
(`services/query/retrieval.py::merge_graph_hits`); the chunks, searched then those of the kept entities and
relations, round-robin too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

QueryMode = Literal["local", "global", "hybrid", "mix", "naive", "bypass"]
ChunkSelection = Literal["vector", "weight"]


@dataclass(frozen=True)
class ModeSearch:
    """What a mode asks for, before its keywords are known."""

    retrieves: bool = True  # False: the question goes to the LLM alone, without context
    graph: bool = True  # entities and relations (so keywords are needed)
    local: bool = False  # entities found by the low-level keywords, their edges and paths
    global_: bool = False  # relations found by the high-level keywords, and their ends
    chunk_search: bool = False  # chunks found by the query's vector and full text
    # hybrid with QUERY_GRAPH_RANK: the searched chunks are a third ranking beside the sides' (so hybrid is never
    # far below naive: bench/multihop); LightRAG's hybrid, with per-item chunk picks, searches no chunks
    chunk_search_when_ranked: bool = False
    # mix: the graph already states the facts of its entities, so a searched chunk should add much per token
    # (full-text rank per word of the chunk); naive has only chunks, so one covering more is better
    chunks_by_density: bool = False
    # local, hybrid and mix: the graph lines fill their token budgets, leaving a tight total little room for the
    # chunks they were drawn from; so the graph's lowest-ranked relations, then entities, give way to the chunks
    # asked for (measured on real text: coverage up at both budgets, see README). Global keeps LightRAG's
    # precedence: its relations are the themes asked for, and giving way cost it fact questions there.
    chunks_before_weak_graph: bool = False


MODE_SEARCHES: Mapping[QueryMode, ModeSearch] = {
    "local": ModeSearch(local=True, chunks_before_weak_graph=True),
    "global": ModeSearch(global_=True),
    "hybrid": ModeSearch(local=True, global_=True, chunk_search_when_ranked=True, chunks_before_weak_graph=True),
    "mix": ModeSearch(
        local=True, global_=True, chunk_search=True, chunks_by_density=True, chunks_before_weak_graph=True
    ),
    "naive": ModeSearch(graph=False, chunk_search=True),
    "bypass": ModeSearch(retrieves=False, graph=False),
}


class RankingSettings(Protocol):
    """The settings a plan reads (`core.config.Settings` has them)."""

    @property
    def cosine_threshold(self) -> float: ...
    @property
    def query_lexical(self) -> bool: ...
    @property
    def query_rrf_k(self) -> int: ...
    @property
    def kg_chunk_pick_method(self) -> str: ...
    @property
    def query_graph_rank(self) -> bool: ...


@dataclass(frozen=True)
class Sides:
    """What one query searches once its keywords are known."""

    local: bool
    global_: bool
    chunk_search: bool

    @property
    def graph(self) -> bool:
        """Entities and relations are found (and merged, trimmed and shown)."""
        return self.local or self.global_

    @property
    def query_vector(self) -> bool:
        """The question is embedded: the chunk search needs it, and it ranks the edges of the local side."""
        return self.chunk_search or self.graph

    @property
    def parallel(self) -> bool:
        """Local runs on one connection while global and the chunk searches run on a second one."""
        return self.local and (self.global_ or self.chunk_search)


@dataclass(frozen=True)
class QueryPlan:
    mode: QueryMode
    search: ModeSearch
    chunk_selection: ChunkSelection  # how the chunks of entities and relations are picked
    rerank: bool  # asked for and a reranker configured: every merged chunk goes to it, then chunk_top_k kept
    lexical: bool  # full-text searches fused with the vector searches
    rrf_k: int  # reciprocal-rank fusion constant
    min_similarity: float  # vector searches drop what is less similar
    # each side ranks its chunks by personalised PageRank fused with vector and full-text evidence, and the
    # sides' (and mix's searched) chunk rankings are fused, instead of LightRAG's per-item chunk picks
    graph_rank: bool = False

    @property
    def retrieves(self) -> bool:
        return self.search.retrieves

    @property
    def needs_keywords(self) -> bool:
        return self.search.graph

    @property
    def graph(self) -> bool:
        """Entities and relations have a place in the context (they may still be none)."""
        return self.search.graph

    @property
    def chunks_by_density(self) -> bool:
        return self.search.chunks_by_density

    @property
    def chunks_before_weak_graph(self) -> bool:
        return self.search.chunks_before_weak_graph

    def sides(self, has_low_level: bool, has_high_level: bool, guessed_low_level: bool = False) -> Sides:
        """`guessed_low_level`: the low-level keywords are only the question and the high-level ones (the model
        gave none): local then also searches the global side, as the high-level keywords are all it was told."""
        s = self.search
        local = s.graph and has_low_level and (s.local or not has_high_level)
        global_ = s.graph and has_high_level and (s.global_ or not has_low_level or guessed_low_level)
        ranked_search = s.chunk_search_when_ranked and self.graph_rank and (local or global_)
        return Sides(local=local, global_=global_, chunk_search=s.chunk_search or ranked_search)


def plan_query(
    mode: QueryMode, settings: RankingSettings, *, chunk_selection: ChunkSelection | None = None, rerank: bool = False
) -> QueryPlan:
    """`chunk_selection` and `rerank` as the request asks (rerank only when a reranker is configured). A request
    asking for a chunk selection gets LightRAG's per-item picks, whatever QUERY_GRAPH_RANK says."""
    search = MODE_SEARCHES[mode]
    selection = chunk_selection or settings.kg_chunk_pick_method.lower()
    return QueryPlan(
        mode=mode,
        search=search,
        chunk_selection="vector" if selection == "vector" else "weight",
        rerank=rerank and search.retrieves,
        lexical=settings.query_lexical,
        rrf_k=settings.query_rrf_k,
        min_similarity=settings.cosine_threshold,
        graph_rank=settings.query_graph_rank and chunk_selection is None,
    )
