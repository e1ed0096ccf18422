"""The query plan, without a database: what each mode searches for each keyword situation, and the ranking
choices taken from the request and the settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import get_args

import pytest

from app.domain.query_plan import MODE_SEARCHES, QueryMode, plan_query


@dataclass(frozen=True)
class FakeSettings:
    cosine_threshold: float = 0.2
    query_lexical: bool = True
    query_rrf_k: int = 20
    kg_chunk_pick_method: str = "VECTOR"
    query_graph_rank: bool = True


# mode, has_low_level, has_high_level -> local, global, chunk_search, query_vector, parallel
SIDES = [
    ("local", False, False, False, False, False, False, False),
    ("local", True, False, True, False, False, True, False),
    ("local", False, True, False, True, False, True, False),  # no low-level keywords: global instead
    ("local", True, True, True, False, False, True, False),
    ("global", False, False, False, False, False, False, False),
    ("global", True, False, True, False, False, True, False),  # no high-level keywords: local instead
    ("global", False, True, False, True, False, True, False),
    ("global", True, True, False, True, False, True, False),
    ("hybrid", False, False, False, False, False, False, False),
    ("hybrid", True, False, True, False, True, True, True),  # graph-ranked hybrid searches chunks too
    ("hybrid", False, True, False, True, True, True, False),
    ("hybrid", True, True, True, True, True, True, True),
    ("mix", False, False, False, False, True, True, False),
    ("mix", True, False, True, False, True, True, True),
    ("mix", False, True, False, True, True, True, False),
    ("mix", True, True, True, True, True, True, True),
    ("naive", False, False, False, False, True, True, False),
    ("naive", True, True, False, False, True, True, False),  # keywords never reach the graph in naive
    ("bypass", False, False, False, False, False, False, False),
    ("bypass", True, True, False, False, False, False, False),
]


@pytest.mark.parametrize("mode", ["local", "global", "hybrid", "mix"])
def test_guessed_low_level_keywords_add_the_global_side_only_to_local(mode):
    """The model gave no low-level keywords (they are the question and the high-level ones): local searches
    the high-level keywords too, the other modes search as they would."""
    plan = plan_query(mode, FakeSettings())
    guessed, told = plan.sides(True, True, guessed_low_level=True), plan.sides(True, True)
    assert guessed.global_
    if mode == "local":
        assert guessed.local and not told.global_
    else:
        assert guessed == told
    assert plan_query(mode, FakeSettings()).sides(True, False, guessed_low_level=True) == plan.sides(True, False)


@pytest.mark.parametrize("mode,low,high,local,global_,chunk_search,query_vector,parallel", SIDES)
def test_sides_per_mode_and_keywords(mode, low, high, local, global_, chunk_search, query_vector, parallel):
    sides = plan_query(mode, FakeSettings()).sides(low, high)
    assert (sides.local, sides.global_, sides.chunk_search) == (local, global_, chunk_search)
    assert sides.query_vector == query_vector
    assert sides.parallel == parallel
    assert sides.graph == (local or global_)


@pytest.mark.parametrize("low,high", [(True, False), (False, True), (True, True)])
def test_hybrid_searches_chunks_only_when_it_ranks_them_itself(low, high):
    """LightRAG's hybrid (per-item chunk picks) searches no chunks; graph-ranked hybrid interleaves them with its
    sides' rankings, as mix does."""
    assert plan_query("hybrid", FakeSettings()).sides(low, high).chunk_search
    assert not plan_query("hybrid", FakeSettings(query_graph_rank=False)).sides(low, high).chunk_search
    assert not plan_query("hybrid", FakeSettings(), chunk_selection="vector").sides(low, high).chunk_search


# mode -> retrieves, needs_keywords (and a graph in the context), chunks ranked by density
MODES = [
    ("local", True, True, False),
    ("global", True, True, False),
    ("hybrid", True, True, False),
    ("mix", True, True, True),
    ("naive", True, False, False),
    ("bypass", False, False, False),
]


@pytest.mark.parametrize("mode,retrieves,needs_keywords,by_density", MODES)
def test_what_each_mode_needs(mode, retrieves, needs_keywords, by_density):
    plan = plan_query(mode, FakeSettings())
    assert plan.mode == mode
    assert plan.retrieves == retrieves
    assert plan.needs_keywords == plan.graph == needs_keywords
    assert plan.chunks_by_density == by_density


def test_every_mode_has_a_plan():
    assert set(MODE_SEARCHES) == set(get_args(QueryMode)) == {row[0] for row in MODES} == {row[0] for row in SIDES}


@pytest.mark.parametrize(
    "asked,configured,expected",
    [
        (None, "VECTOR", "vector"),
        (None, "WEIGHT", "weight"),
        ("weight", "VECTOR", "weight"),
        ("vector", "WEIGHT", "vector"),
    ],
)
def test_chunk_selection_as_asked_else_as_configured(asked, configured, expected):
    plan = plan_query("mix", FakeSettings(kg_chunk_pick_method=configured), chunk_selection=asked)
    assert plan.chunk_selection == expected


@pytest.mark.parametrize(
    "mode,rerank,expected",
    [("mix", True, True), ("mix", False, False), ("naive", True, True), ("bypass", True, False)],
)
def test_rerank_only_when_asked_and_something_is_retrieved(mode: QueryMode, rerank, expected):
    assert plan_query(mode, FakeSettings(), rerank=rerank).rerank == expected


@pytest.mark.parametrize("lexical", [True, False])
def test_search_settings_carried(lexical):
    plan = plan_query("hybrid", FakeSettings(cosine_threshold=0.35, query_lexical=lexical, query_rrf_k=7))
    assert (plan.min_similarity, plan.lexical, plan.rrf_k) == (0.35, lexical, 7)
    assert plan_query("hybrid", FakeSettings()).rerank is False  # off unless asked


@pytest.mark.parametrize("graph_rank", [True, False])
def test_graph_rank_carried(graph_rank):
    assert plan_query("mix", FakeSettings(query_graph_rank=graph_rank)).graph_rank is graph_rank
    # a request asking for LightRAG's per-item picks gets them
    assert plan_query("mix", FakeSettings(), chunk_selection="weight").graph_rank is False
