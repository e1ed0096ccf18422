"""Pure parts of fused retrieval: reciprocal-rank fusion, the priority merge, search terms, weight factor."""

from __future__ import annotations

import pytest

from app.domain.rank_fusion import fuse, interleave, priority_merge, rrf_scores, weight_factor
from app.domain.search_terms import search_terms


def test_rrf_scores_sum_reciprocal_ranks_over_lists():
    scores = rrf_scores([["a", "b", "c"], ["c", "a"]], k=10)
    assert scores["a"] == pytest.approx(1 / 11 + 1 / 12)
    assert scores["b"] == pytest.approx(1 / 12)
    assert scores["c"] == pytest.approx(1 / 13 + 1 / 11)


def test_rrf_counts_a_repeat_within_one_list_once():
    assert rrf_scores([["a", "a", "b"]], k=1) == {"a": pytest.approx(1 / 2), "b": pytest.approx(1 / 3)}


def test_fuse_puts_items_found_by_both_searches_first():
    vector, lexical = ["v1", "both", "v2"], ["l1", "both"]
    fused = [item for item, _ in fuse([vector, lexical], key=lambda x: x, k=60)]
    assert fused[0] == "both"
    assert set(fused) == {"v1", "v2", "l1", "both"} and len(fused) == 4


def test_fuse_breaks_ties_by_first_appearance_taking_lists_in_turn():
    fused = [item for item, _ in fuse([["a", "b"], ["x", "y"]], key=lambda x: x)]
    assert fused == ["a", "x", "b", "y"]


def test_fuse_boost_reorders_by_multiplier():
    weights = {"light": 1.0, "heavy": 20.0}
    plain = [item for item, _ in fuse([["light", "heavy"]], key=lambda x: x)]
    boosted = [
        item
        for item, _ in fuse([["light", "heavy"]], key=lambda x: x, k=1000, boost=lambda x: weight_factor(weights[x]))
    ]
    assert plain == ["light", "heavy"] and boosted == ["heavy", "light"]


def test_weight_factor_is_mild_and_monotonic():
    assert weight_factor(1.0) == 1.0
    assert 1.0 < weight_factor(10.0) < 1.3
    assert 0.9 < weight_factor(0.5) < 1.0
    assert weight_factor(0.0) > 0  # a zero weight never zeroes a relation out


def test_priority_merge_keeps_every_lead_before_the_round_robin_rest():
    local = (["L1", "L2", "L3", "l4", "l5"], 3)
    global_ = (["G1", "g2", "g3"], 1)
    assert priority_merge([local, global_], key=lambda x: x) == ["L1", "L2", "L3", "G1", "l4", "g2", "l5", "g3"]


def test_priority_merge_without_leads_is_round_robin_and_deduplicates():
    merged = priority_merge([(["a", "b", "c"], 0), (["b", "x"], 0)], key=lambda x: x)
    assert merged == ["a", "b", "x", "c"]


def test_priority_merge_skips_a_lead_item_already_taken():
    merged = priority_merge([(["a", "b"], 2), (["b", "c"], 2)], key=lambda x: x)
    assert merged == ["a", "b", "c"]


def test_search_terms_are_distinct_folded_words_in_order():
    assert search_terms(["Dr. Mira Tolven, tolven!", "seed-funding"]) == ["dr", "mira", "tolven", "seed", "funding"]
    assert search_terms(["Ünïcode Ørsted"]) == ["ünïcode", "ørsted"]
    assert search_terms(["", "  ", "--"]) == []


def test_search_terms_are_capped():
    assert search_terms([" ".join(f"w{i}" for i in range(100))], max_terms=5) == ["w0", "w1", "w2", "w3", "w4"]


def test_interleave_puts_keys_by_best_rank_and_at_a_tie_those_more_rankings_agree_on():
    rankings = [["v1", "x", "v2"], ["l1", "x", "l2"], ["g1", "g2", "l1"]]
    # best rank 1: l1 (also 3rd in the last) before v1 and g1; best rank 2: x (held twice) before g2
    assert interleave(rankings) == ["l1", "v1", "g1", "x", "g2", "v2", "l2"]
    assert interleave([]) == [] and interleave([[], ["a"]]) == ["a"]


@pytest.mark.parametrize("seed", range(20))
def test_interleave_holds_every_rankings_top_share_in_its_first_n(seed):
    import random

    rng = random.Random(seed)
    pool = [f"c{i}" for i in range(30)]
    rankings = [rng.sample(pool, rng.randint(0, 15)) for _ in range(3)]
    order = interleave(rankings)
    assert sorted(order) == sorted({c for r in rankings for c in r})
    for n in range(len(order) + 1):
        for ranking in rankings:
            assert set(ranking[: n // len(rankings)]) <= set(order[:n])
