"""The hand-labelled entity-resolution pairs of the real-text corpus (bench/data/resolution_pairs_medical.json,
written by bench/realtext/resolution.py): their shape, and that the committed figures are those of the labels."""

from __future__ import annotations

import json

from bench.realtext.resolution import FIXTURE, LABELS, SAMPLE_SIZE, figures, pair_id


def _fixture() -> dict:
    return json.loads(FIXTURE.read_text())


def test_the_fixture_holds_100_distinct_hand_labelled_pairs_with_both_sides_described():
    pairs = _fixture()["pairs"]
    assert len(pairs) == SAMPLE_SIZE
    assert len({p["id"] for p in pairs}) == SAMPLE_SIZE
    for p in pairs:
        assert p["id"] == pair_id(p["a"]["name"], p["b"]["name"])
        assert p["a"]["name"].casefold() != p["b"]["name"].casefold()
        for side in (p["a"], p["b"]):
            assert side["name"].strip() and side["type"].strip()
            assert "\n" not in side["description"]
        assert p["decision"] in ("merged", "not merged")
        assert (p["rule"] is not None) == (p["decision"] == "merged")
        assert p["label"] in LABELS, p["id"]
        assert p["reason"].strip(), p["id"]


def test_the_sample_mixes_automatic_merges_and_pairs_not_merged_as_counted():
    fixture = _fixture()
    counts, pairs = fixture["counts"], fixture["pairs"]
    merged = sum(p["decision"] == "merged" for p in pairs)
    assert merged == min(counts["merged_pairs"], 60)
    assert SAMPLE_SIZE - merged <= counts["candidate_pairs_not_merged"]
    assert counts["pairs_considered"] == counts["merged_pairs"] + counts["candidate_pairs_not_merged"]
    assert sum(counts["merges_by_rule"].values()) >= counts["merged_pairs"]


def test_the_committed_figures_are_those_of_the_labels():
    fixture = _fixture()
    assert fixture["figures"] == figures(fixture["pairs"])
    f = fixture["figures"]
    assert f["labelled"] == SAMPLE_SIZE
    assert f["merges_right"] <= f["merges_labelled"] and f["same_merged"] <= f["same_pairs"]
    merged = sum(p["decision"] == "merged" for p in fixture["pairs"])
    assert sum(sum(v) for v in f["merges_by_kind"].values()) == merged
    assert "other" not in f["merges_by_kind"]  # every merge's rule is told by its evidence


def test_figures_count_unsure_pairs_in_neither_precision_nor_recall():
    def pair(decision: str, label: str) -> dict:
        return {"decision": decision, "label": label, "evidence": "'Kidney' fits only 'Kidney Cancer' (root)"}

    sample = [pair("merged", "same"), pair("merged", "different"), pair("merged", "unsure"), pair("not merged", "same")]
    f = figures(sample)
    assert (f["merges_labelled"], f["merges_right"], f["precision"]) == (2, 1, 0.5)
    assert (f["same_pairs"], f["same_merged"], f["recall"]) == (2, 1, 0.5)
    assert f["unsure"] == 1 and f["labelled"] == 4
    assert f["merges_by_kind"] == {"root alone (cross_document.lone_word_candidates)": [1, 1, 1]}
