"""The parsers against a corpus of messy model answers (tests/fixtures/model_outputs, described by its manifest).

The corpus imitates how instruction-tuned models of different sizes misbehave: near-miss delimiters,
the legacy tuple style, JSON instead of records, wrapped and truncated lines, reasoning blocks, prose
around records, decorated names, type names as relation ends, markup in descriptions, repeated records;
plus keyword and summary answers. Recovery is measured over the whole corpus: at least 99% of the
recoverable records, and no entity or relation that the answers do not state.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.config import DEFAULT_ENTITY_TYPES
from app.domain.extraction_parser import merge_gleaning, parse_extraction
from app.domain.names import entity_key
from app.domain.records import ChunkExtraction
from app.services.graph.summaries import clean_summary
from app.services.query.keywords import parse_keywords, with_fallbacks

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "model_outputs"
MANIFEST = json.loads((CORPUS / "manifest.json").read_text())
EXTRACTIONS = {**MANIFEST["extraction"], **MANIFEST["gleaning"]}
LEFTOVERS = ("<|", "|>", "<b>", "</", "<br", "<p>", "<span", "**", "COMPLETE")


def _parse(name: str) -> ChunkExtraction:
    return parse_extraction(
        (CORPUS / name).read_text(), f"chunk-{name}", "corpus.txt", entity_types=DEFAULT_ENTITY_TYPES
    )


def _extract(name: str) -> ChunkExtraction:
    spec = EXTRACTIONS[name]
    result = _parse(name)
    return merge_gleaning(_parse(spec["first"]), result) if "first" in spec else result


def _graph(result: ChunkExtraction) -> tuple[set[str], set[tuple[str, str]]]:
    """The entity keys and relation pairs the answer puts into the graph (relation ends included)."""
    pairs = {(r.src_key, r.tgt_key) for r in result.relations}
    return {e.key for e in result.entities} | {k for pair in pairs for k in pair}, pairs


def _expected(spec: dict) -> tuple[set[str], set[tuple[str, str]]]:
    keys = {entity_key(name) for name in spec["entities"]}
    pairs = {tuple(sorted((entity_key(a), entity_key(b)))) for a, b in spec["relations"]}
    return keys, pairs


def _score(name: str) -> tuple[int, int, list[str]]:
    """Recovered and recoverable records of one answer, and its junk (items the answer does not state)."""
    found_keys, found_pairs = _graph(_extract(name))
    want_keys, want_pairs = _expected(EXTRACTIONS[name])
    recovered = len(found_keys & want_keys) + len(found_pairs & want_pairs)
    junk = sorted(found_keys - want_keys) + [f"{a} -- {b}" for a, b in sorted(found_pairs - want_pairs)]
    return recovered, len(want_keys) + len(want_pairs), junk


def test_corpus_recovery_is_at_least_99_percent_without_junk():
    recovered = recoverable = 0
    junk: dict[str, list[str]] = {}
    for name in EXTRACTIONS:
        got, total, extra = _score(name)
        recovered, recoverable = recovered + got, recoverable + total
        if extra:
            junk[name] = extra
    share = recovered / recoverable
    print(
        f"\nmodel-output corpus: {recovered}/{recoverable} recoverable records recovered ({share:.1%}), "
        f"{sum(map(len, junk.values()))} junk items, {len(EXTRACTIONS)} answers"
    )
    assert not junk, junk
    assert share >= 0.99, f"{recovered}/{recoverable}"


@pytest.mark.parametrize("name", sorted(EXTRACTIONS))
def test_each_answer(name):
    spec = EXTRACTIONS[name]
    result = _extract(name)
    got, total, junk = _score(name)
    assert (got, junk) == (total, []), name
    types = {e.key: e.entity_type for e in result.entities}
    for entity, entity_type in spec["entities"].items():
        if entity_type is not None:
            assert types.get(entity_key(entity)) == entity_type, entity
        else:  # a relation end only: the merge creates it from the relation
            assert entity_key(entity) not in types, entity
    assert result.malformed == spec.get("unrecoverable", 0)
    assert result.no_usable_records == spec.get("format_failure", False)
    if "records" in spec:
        assert [len(result.entities), len(result.relations)] == spec["records"]
    descriptions = {e.key: e.description for e in result.entities}
    for entity, description in spec.get("descriptions", {}).items():
        assert descriptions[entity_key(entity)] == description
    relation_text = {(r.src_key, r.tgt_key): r.description for r in result.relations}
    for a, b, description in spec.get("relation_descriptions", []):
        assert relation_text[tuple(sorted((entity_key(a), entity_key(b))))] == description
    for text in (
        [e.description for e in result.entities]
        + [r.description for r in result.relations]
        + [k for r in result.relations for k in r.keywords]
        + [e.name for e in result.entities]
    ):
        assert not any(mark in text for mark in LEFTOVERS), text


@pytest.mark.parametrize("name", sorted(MANIFEST["keywords"]))
def test_keyword_answers(name):
    spec = MANIFEST["keywords"][name]
    keywords = with_fallbacks(parse_keywords((CORPUS / name).read_text()), spec["query"])
    assert (keywords.high_level, keywords.low_level) == (spec["high"], spec["low"])


@pytest.mark.parametrize("name", sorted(MANIFEST["summary"]))
def test_summary_answers(name):
    assert clean_summary((CORPUS / name).read_text()) == (MANIFEST["summary"][name] or "")
