"""The multi-hop bench's pure parts (bench/multihop): data, passage location and scoring, without its extra."""

from __future__ import annotations

import pytest

from bench.multihop import data
from bench.multihop.scoring import Locator, evidence, summarise, table


def test_checksums_hold_and_a_changed_file_is_named(tmp_path):
    data.verify()
    (tmp_path / "musique_train.json").write_text("[]")
    with pytest.raises(ValueError, match="musique_train.json"):
        data.verify(tmp_path, {"musique_train.json": data.CHECKSUMS["musique_train.json"]})


@pytest.mark.parametrize(("dataset", "passages", "gold_counts"), [("hotpotqa", 994, {2}), ("musique", 1890, {2, 3, 4})])
def test_every_question_has_its_gold_passages_in_the_corpus(dataset, passages, gold_counts):
    corpus, questions = data.load(dataset)
    assert len(corpus) == passages and len(questions) == 100
    assert {len(q.gold) for q in questions} == gold_counts
    assert all(set(q.gold) <= set(q.context) for q in questions)
    first = questions[0]
    assert corpus[first.gold[0]].document.startswith(corpus[first.gold[0]].title + "\n")


def test_a_sample_ingests_only_its_questions_passages_and_all_questions_the_whole_corpus():
    corpus, questions = data.load("hotpotqa")
    kept, indexes = data.sample(questions, 3, len(corpus))
    assert kept == questions[:3] and set(indexes) == {i for q in kept for i in q.context}
    assert data.sample(questions, None, len(corpus)) == (questions, list(range(len(corpus))))


def test_chunks_are_located_by_whole_text_or_as_part_of_a_longer_passage():
    locate = Locator({3: "Alpha\nAlpha is a town.", 7: "Beta\nBeta was founded in 1900. It lies on a river."})
    assert locate.passage("  Alpha\nAlpha is a town.\n") == 3
    assert locate.passage("It lies on a river.") == 7
    assert locate.passage("Gamma") is None
    assert locate.passages(["It lies on a river.", "Gamma", "Alpha\nAlpha is a town.", "Beta was founded"]) == [7, 3]


def test_all_evidence_needs_every_gold_passage_and_recall_counts_the_share():
    assert evidence([3, 7], [7, 1, 3]) == (True, 1.0)
    assert evidence([3, 7], [7, 1]) == (False, 0.5)
    assert evidence([3, 7, 9], []) == (False, 0.0)
    with pytest.raises(ValueError):
        evidence([], [1])


def test_summary_averages_per_budget_mode_and_system_and_the_table_shows_the_difference():
    def row(system, complete, recall, found):
        return {
            "system": system,
            "budget": "tight",
            "mode": "mix",
            "seconds": 0.1,
            "all_evidence": complete,
            "recall": recall,
            "found": found,
            "tokens": 100,
        }

    rows = [row("service", True, 1.0, [1, 2]), row("service", False, 0.5, [1]), row("official", True, 1.0, [1, 2, 3])]
    summary = summarise(rows)
    service, official = summary["tight"]["mix"]["service"], summary["tight"]["mix"]["official"]
    assert service["all_evidence"] == 0.5 and service["recall"] == 0.75 and service["chunks"] == 1.5
    assert official["all_evidence"] == 1.0 and official["questions"] == 1
    assert "-0.500" in table(summary)


def test_a_lost_gold_passage_is_told_apart_by_where_the_wide_ranking_puts_it():
    from bench.multihop.diagnose import losses, reason

    assert reason(4, [1, 2], chunk_top_k=5) == "not a candidate"
    assert reason(4, [1, 2, 3, 5, 6, 4], chunk_top_k=5) == "ranked out"
    assert reason(4, [1, 4], chunk_top_k=5) == "no room"

    def row(system, found, wide=None):
        r = {
            "system": system,
            "budget": "tight",
            "mode": "global",
            "id": "q",
            "gold": [4, 9],
            "found": found,
            "all_evidence": {4, 9} <= set(found),
        }
        return r | ({"wide": wide} if wide is not None else {})

    found = losses([row("service", [9], wide=[9, 1, 2, 3, 5, 6, 4]), row("official", [4, 9])], {"tight": 5})
    entry = found[("tight", "global")]
    assert entry["lost"] == 1 and entry["won"] == 0 and entry["reasons"] == {"ranked out": 1} and entry["ranks"] == [6]


def test_a_question_is_generic_when_even_its_most_specific_matching_keyword_matches_many_relations():
    from bench.multihop.specificity import classify, split, table

    assert classify([("film", 0.08), ("director", 0.02)]) == "generic"
    assert classify([("film", 0.08), ("steam locomotive", 0.001)]) == "specific"
    assert classify([("film", 0.08), ("zyzzyva", 0.0)]) == "generic"  # a keyword matching nothing says nothing
    assert classify([("zyzzyva", 0.0)]) == classify([]) == "unmatched"

    profiles = {"a": [("film", 0.2)], "b": [("locomotive", 0.001)], "c": [("film", 0.2)]}

    def row(qid, system, complete):
        return {"id": qid, "budget": "default", "mode": "global", "system": system, "all_evidence": complete}

    rows = [row("a", "service", True), row("c", "service", False), row("b", "service", True)]
    rows += [row("a", "official", False), row("x", "service", True)]  # an unprofiled question is left out
    by_class = split(rows, profiles)
    assert by_class["default"]["global"]["service"] == {"generic": (2, 0.5), "specific": (1, 1.0)}
    assert by_class["default"]["global"]["official"] == {"generic": (1, 0.0)}
    shown = table(profiles, by_class)
    assert "generic (>= 1%) 2, specific 1, unmatched 0" in shown and "0.500 (2)" in shown
