"""Pure parts of graph expansion: personalised PageRank, chunk scores from ranks, weighted rank fusion."""

from __future__ import annotations

import random

import pytest

from app.domain.graph_rank import chunk_scores, personalized_pagerank, ranked, weighted_rrf
from app.services.query.graph_chunks import PASSAGE_SHARE, is_passage, passage_node, with_passage_seeds


def test_pagerank_is_a_distribution_that_favours_the_seed_and_its_neighbourhood():
    edges = [("a", "b", 1.0), ("b", "c", 1.0), ("c", "d", 1.0), ("x", "y", 1.0)]
    ranks = personalized_pagerank(edges, {"a": 1.0})
    assert sum(ranks.values()) == pytest.approx(1.0)
    assert ranks["a"] > ranks["b"] > ranks["c"] > ranks["d"] > 0
    assert ranks.get("x", 0.0) == 0.0 and ranks.get("y", 0.0) == 0.0


def test_pagerank_reaches_two_hops_and_rewards_nodes_several_seeds_share():
    # s1 - m - s2: the shared middle outranks each seed's private neighbour
    edges = [("s1", "m", 1.0), ("s2", "m", 1.0), ("s1", "p1", 1.0), ("s2", "p2", 1.0), ("m", "far", 1.0)]
    ranks = personalized_pagerank(edges, {"s1": 1.0, "s2": 1.0})
    assert ranks["m"] > ranks["p1"] == pytest.approx(ranks["p2"])
    assert ranks["far"] > 0


def test_pagerank_follows_heavier_edges_more():
    ranks = personalized_pagerank([("a", "heavy", 9.0), ("a", "light", 1.0)], {"a": 1.0})
    assert ranks["heavy"] > 5 * ranks["light"]


def test_pagerank_returns_a_stranded_seed_its_mass_and_ignores_bad_seeds():
    assert personalized_pagerank([], {"lonely": 2.0}) == {"lonely": pytest.approx(1.0)}
    assert personalized_pagerank([("a", "b", 1.0)], {}) == {}
    assert personalized_pagerank([("a", "b", 1.0)], {"a": 0.0, "b": -1.0}) == {}
    ranks = personalized_pagerank([("a", "a", 5.0), ("a", "b", 1.0)], {"a": 1.0})  # self-loops are ignored
    assert sum(ranks.values()) == pytest.approx(1.0) and ranks["b"] > 0


def test_chunk_scores_spread_each_nodes_rank_over_its_chunks():
    ranks = {"hub": 0.6, "rare": 0.3, "none": 0.0}
    scores = chunk_scores(ranks, {"hub": ["c1", "c2", "c3"], "rare": ["c3"], "none": ["c9"]})
    assert scores == {"c1": pytest.approx(0.2), "c2": pytest.approx(0.2), "c3": pytest.approx(0.5)}


def test_chunk_scores_take_tuple_keys_and_count_a_repeated_chunk_once():
    assert chunk_scores({("a", "b"): 0.4}, {("a", "b"): ["c", "c"]}) == {"c": pytest.approx(0.4)}


def test_ranked_breaks_ties_by_the_given_order_then_by_key():
    assert ranked({"b": 1.0, "a": 1.0, "c": 2.0, "z": 1.0}, tie_order=["z"]) == ["c", "z", "a", "b"]


def test_weighted_rrf_favours_agreement_and_honours_weights():
    assert weighted_rrf([(["a", "both"], 1.0), (["both", "b"], 1.0)], k=10)[0] == "both"
    # the heavier list's first item wins over the lighter list's first item
    assert weighted_rrf([(["light"], 0.5), (["heavy"], 1.0)], k=10) == ["heavy", "light"]
    # equal scores: first appearance, lists taken in turn
    assert weighted_rrf([(["a", "b"], 1.0), (["x", "y"], 1.0)], k=10) == ["a", "x", "b", "y"]
    assert weighted_rrf([], k=10) == []


def test_hybrid_and_mix_interleave_the_searched_chunks_and_the_sides_rankings_by_best_rank():
    from app.domain.hits import ChunkHit, GraphHits
    from app.services.query.graph_chunks import fused_chunk_order

    local = GraphHits(chunk_ids=["shared", "l1", "l2", "l3"])
    global_ = GraphHits(chunk_ids=["g1", "g2", "shared", "g3"])
    searched = [ChunkHit(i, "doc", "text", "f.txt", "vector") for i in ("v1", "g1", "v2")]
    # best rank 1: g1 and shared are held by two rankings each, g1 higher in sum (global 1st, searched 2nd), then
    # v1, held by one; every ranking's first chunk precedes every second one, a chunk held twice counted once
    assert fused_chunk_order(local, global_, searched) == [
        ("g1", "vector"),
        ("shared", "entity"),
        ("v1", "vector"),
        ("l1", "entity"),
        ("g2", "relation"),
        ("v2", "vector"),
        ("l2", "entity"),
        ("l3", "entity"),
        ("g3", "relation"),
    ]
    # without searched chunks (local or global mode) a side's own ranking is kept as it is
    assert [c for c, _ in fused_chunk_order(local, GraphHits(), [])] == local.chunk_ids


def test_a_passage_sharing_a_bridge_entity_with_the_questions_nearest_passage_gets_mass():
    # the question's nearest passage p1 cites "bridge"; p2 (not near the question) cites it too; p3 cites
    # only an entity nobody reaches
    nearest = [("p1", 0.2, ["bridge", "town"])]
    seeds, edges = with_passage_seeds({"named": 1.0}, nearest)
    assert sum(seeds.values()) == pytest.approx(1.0)
    assert seeds[passage_node("p1")] == pytest.approx(PASSAGE_SHARE)
    ranks = personalized_pagerank([*edges, ("named", "other", 1.0)], seeds)
    scores = chunk_scores(ranks, {"bridge": ["p1", "p2"], "lonely": ["p3"], "other": ["p4"]})
    assert scores["p2"] > 0 and "p3" not in scores
    assert not is_passage("bridge") and is_passage(passage_node("p1"))


def test_passage_seeds_alone_hold_all_the_restarts_and_none_leave_the_entity_seeds_alone():
    seeds, _ = with_passage_seeds({}, [("p1", 0.5, []), ("p2", 0.5, ["x"])])
    assert seeds == {passage_node("p1"): pytest.approx(0.5), passage_node("p2"): pytest.approx(0.5)}
    assert with_passage_seeds({"a": 2.0}, []) == ({"a": 2.0}, [])


def test_ranked_orders_as_one_sort_by_score_tie_position_and_key():
    """Its stable sorts give the order of the single sort it replaces, duplicates in the tie order (a key's
    last place counts), keys outside it and equal scores (-0.0 and 0.0 too) included."""
    rng = random.Random(7)
    for _ in range(3000):
        keys = [rng.choice("abcdef") + str(rng.randint(0, 9)) for _ in range(rng.randint(0, 25))]
        scores = {k: rng.choice([0.0, -0.0, 0.25, 0.5, rng.random()]) for k in keys}
        tie_order = [rng.choice([*keys, "x", "y"]) for _ in range(rng.randint(0, 8))]
        position = {k: i for i, k in enumerate(tie_order)}
        one_sort = sorted(scores, key=lambda k: (-scores[k], position.get(k, len(position)), k))
        assert ranked(scores, tie_order) == one_sort
