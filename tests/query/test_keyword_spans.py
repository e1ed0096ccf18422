"""The names a question's keyword holds (`domain/keyword_spans.py`): two names joined, a possessive, a name
inside a phrase; glue words never make a name alone, and a span inside a longer name found is not added."""

from __future__ import annotations

from app.domain.keyword_spans import MAX_WORDS, held_names, keyword_spans


def test_spans_are_longest_first_without_glue_at_their_ends():
    spans = keyword_spans("Exies or Circus Diablo")
    assert spans[0] == "exies or circus diablo"
    assert {"circus diablo", "exies", "circus", "diablo"} <= set(spans)
    assert "or" not in spans and "exies or" not in spans and "or circus diablo" not in spans
    assert spans.index("circus diablo") < spans.index("diablo")


def test_a_possessive_and_edge_punctuation_are_stripped():
    assert keyword_spans("Grace Krilanovich's")[0] == "grace krilanovich"
    assert keyword_spans('"Aenima",')[0] == "aenima"
    assert keyword_spans("of the") == [] and "tv" not in keyword_spans("TV")


def test_a_long_phrase_is_split_on_its_first_words_only():
    words = [f"word{i}" for i in range(MAX_WORDS + 4)]
    assert f"word{MAX_WORDS}" not in keyword_spans(" ".join(words))


def test_held_names_gives_each_name_once_and_no_span_inside_one_taken():
    known = {"exies", "circus diablo", "diablo", "circus"}
    assert held_names("Exies or Circus Diablo", known) == ["circus diablo", "exies"]
    assert held_names("Grace Krilanovich's", {"grace krilanovich"}) == ["grace krilanovich"]
    assert held_names("the film", {"film"}) == ["film"]
    assert held_names("Nothing known here", known) == []
