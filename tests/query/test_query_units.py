"""Pure parts of the query engine: keyword parsing, chunk selection, round-robin, truncation, references."""

from __future__ import annotations

import pytest

from app.domain.chunk_selection import candidate_lists, pick_by_vector, pick_by_weighted_polling, round_robin
from app.domain.context_budget import (
    TokenLedger,
    build_references,
    entity_line,
    relation_line,
    render_context,
    trim_history,
    truncate_by_tokens,
    yield_to_chunks,
)
from app.domain.hits import ChunkHit, EntityHit, RelationHit
from app.prompts.keywords import keyword_messages
from app.providers.tokenizer import get_tokenizer
from app.services.query.keywords import ExtractedKeywords, parse_keywords, with_fallbacks


@pytest.mark.parametrize(
    "text",
    [
        '{"high_level_keywords": ["themes"], "low_level_keywords": ["Charlie Gordon"]}',
        '```json\n{"high_level_keywords": ["themes"], "low_level_keywords": ["Charlie Gordon"]}\n```\nHope this helps!',
        'Sure! {"high_level_keywords": ["themes"], "low_level_keywords": ["Charlie Gordon"]} Anything else?',
        '{"high_level_keywords": ["themes",], "low_level_keywords": ["Charlie Gordon"',  # broken: repaired
        '{"high_level_keywords": "themes", "low_level_keywords": ["Charlie Gordon", 3, null, "Charlie Gordon"]}',
    ],
)
def test_parse_keywords_is_robust(text):
    parsed = parse_keywords(text)
    assert parsed.high_level == ["themes"]
    assert parsed.low_level == ["Charlie Gordon"]


def test_parse_keywords_splits_strings_and_gives_up_cleanly():
    parsed = parse_keywords('{"high_level_keywords": "a, b; c\\nd", "low_level_keywords": []}')
    assert parsed.high_level == ["a", "b", "c", "d"]
    assert parse_keywords("no json here at all").empty
    assert parse_keywords("").empty


def test_parse_keywords_reads_past_reasoning_and_near_miss_key_names():
    text = (
        '<think>maybe {"high_level_keywords": ["draft"]}</think>{"High level keywords": ["themes"], "low_level": ["X"]}'
    )
    parsed = parse_keywords(text)
    assert (parsed.high_level, parsed.low_level) == (["themes"], ["X"])
    assert parse_keywords('<think>\nthe answer is {"high_level_keywords": ["cut"]').empty  # reasoning cut off


def test_empty_low_level_keywords_fall_back_to_the_query_and_high_level_keywords():
    long_query = "How did the relationship between the two research groups change over the decade? " * 3
    assert with_fallbacks(ExtractedKeywords(["collaboration"], []), long_query) == ExtractedKeywords(
        ["collaboration"], [long_query.strip(), "collaboration"]
    )
    assert with_fallbacks(ExtractedKeywords([], []), " hello ").low_level == ["hello"]
    kept = ExtractedKeywords(["a"], ["B"])
    assert with_fallbacks(kept, "query") is kept


def test_keyword_prompt_has_examples_first_and_query_last():
    [message] = keyword_messages("Who is Charlie Gordon?", [{"role": "user", "content": "earlier"}], "French")
    content = message["content"]
    assert content.count("high_level_keywords") >= 5  # instructions plus few-shot examples
    assert "French" in content and "user: earlier" in content
    assert content.endswith("Query: Who is Charlie Gordon?")


def test_candidate_lists_first_owner_and_occurrence_order():
    lists = candidate_lists([["a", "b", "c"], ["c", "b", "d"], ["d"]])
    # b, c listed by two entities come before a; each chunk only for the first entity listing it
    assert lists == [["b", "c", "a"], ["d"], []]
    assert candidate_lists([["a", "b"], ["b", "c"]], exclude=["b"]) == [["a"], ["c"]]


def test_weighted_polling_linear_quota_and_shortfall():
    lists = [["a1"], ["b1", "b2", "b3", "b4"], ["c1", "c2", "c3"]]
    # expected 5, 3, 1 → take 1, 3, 1; shortfall 4 goes to the first entity with unused chunks (b4), then none
    assert pick_by_weighted_polling(lists, 5) == ["a1", "b1", "b2", "b3", "c1", "b4", "c2", "c3"]
    assert pick_by_weighted_polling([["x1", "x2", "x3", "x4", "x5", "x6"]], 5) == ["x1", "x2", "x3", "x4", "x5"]
    assert pick_by_weighted_polling([], 5) == []


def test_vector_pick_budget_and_fallback_signal():
    lists = [["a", "b", "c"], ["d"]]
    distances = {"a": 0.9, "b": 0.1, "c": 0.5, "d": 0.3}
    assert pick_by_vector(lists, distances, 2) == ["b", "d"]  # budget int(2 * 2 / 2) = 2
    assert pick_by_vector(lists, {"a": 0.1}, 2) is None  # a candidate without a vector → caller falls back


def test_round_robin_order_and_dedupe():
    assert round_robin(["v1", "x"], ["e1", "e2", "e3"], ["x", "r2"]) == ["v1", "e1", "x", "e2", "r2", "e3"]


def test_truncation_keeps_whole_items_within_budget():
    tok = get_tokenizer()
    items = [EntityHit(f"k{i}", f"Entity {i}", "thing", "word " * 200, 1, []) for i in range(10)]
    for budget in (1, 50, 300, 1000, 2500):
        kept = truncate_by_tokens(items, entity_line, budget, TokenLedger(tok))
        assert tok.count("\n".join(entity_line(e) for e in kept)) <= budget
        assert len(kept) == 0 or kept == items[: len(kept)]
    assert len(truncate_by_tokens(items, entity_line, 1000, TokenLedger(tok))) == 4


def test_graph_yields_its_lowest_ranked_relations_then_entities_to_chunks():
    ledger = TokenLedger(get_tokenizer())
    entities = [EntityHit(f"k{i}", f"Entity {i}", "thing", "word " * 50, 1, []) for i in range(3)]
    relations = [RelationHit(f"k{i}", f"k{i + 1}", "a", "b", "", "link " * 50, 1.0, []) for i in range(3)]
    relation_cost = ledger.count(ledger.line(relation_line, relations[-1]))
    entity_cost = ledger.count(ledger.line(entity_line, entities[-1]))

    assert yield_to_chunks(entities, relations, 0, ledger) == (entities, relations)
    kept_entities, kept_relations = yield_to_chunks(entities, relations, relation_cost + 1, ledger)
    assert kept_entities == entities and kept_relations == relations[:1]  # the two weakest relations went
    kept_entities, kept_relations = yield_to_chunks(entities, relations, 3 * relation_cost + entity_cost, ledger)
    assert kept_entities == entities[:2] and kept_relations == []  # then the weakest entity
    assert yield_to_chunks(entities, relations, 10**6, ledger) == ([], [])
    assert len(entities) == 3 and len(relations) == 3  # the caller's lists are left as they were


def test_references_by_citation_count_then_first_appearance_and_readable_descriptions():
    chunks = [
        ChunkHit("c1", "d1", "x", "a.txt", "vector"),
        ChunkHit("c2", "d2", "y", None, "entity"),
        ChunkHit("c3", "d2", "z", None, "entity"),
    ]
    refs = build_references(chunks)
    assert [(r.reference_id, r.document_id, r.label) for r in refs] == [("1", "d2", "d2"), ("2", "d1", "a.txt")]
    segments, _ = render_context(
        [EntityHit("k", "A", "t", "one<SEP>two", 1, [])], [], chunks, TokenLedger(get_tokenizer())
    )
    text = "".join(segments)
    assert "<SEP>" not in text and "one\\ntwo" in text
    assert "[1] d2" in text and '"id": "c1", "reference_id": "2", "content": "x"' in text


TRICKY = [
    "plain words",
    "  leading spaces",
    "trailing newline\n",
    "tabs\tand\r\ncrlf",
    "unicode: naïve café 東京 🚀",
    "// slashes /path",
    "```fenced```",
    '"quotes" and {braces}',
    "1234567 digits 42",
    "",
    "\n\n",
    "x" * 3000,
]


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_ledger_counts_are_exact_for_rendered_contexts(encoding):
    """The budget arithmetic relies on segment counts adding up exactly; check it on awkward content."""
    from app.domain.hits import RelationHit
    from app.providers.tokenizer import Tokenizer

    tok = Tokenizer(encoding)
    ledger = TokenLedger(tok)
    entities = [EntityHit(f"k{i}", f"Ent {t[:20]}", "t", f"{t}<SEP>{t}", 1, []) for i, t in enumerate(TRICKY)]
    relations = [RelationHit("a", "b", t[:10] or "x", "B", t, t, 1.0, []) for t in TRICKY]
    chunks = [
        ChunkHit(f"c{i}", f"d{i % 13}", t, f"file {t[:15]}.txt" if i % 2 else None, "vector")
        for i, t in enumerate(TRICKY * 2)
    ]
    for ents, rels in ((entities, relations), (None, None), ([], [])):
        segments, refs = render_context(ents, rels, chunks, ledger)
        assert len(refs) == 13  # two-digit reference ids included
        assert ledger.joined(segments) == tok.count("".join(segments))
    head = "Instructions ending with a blank line\n\n"
    assert ledger.joined([head, *segments]) == tok.count(head + "".join(segments))


def test_history_turns():
    history = [{"role": r, "content": str(i)} for i, r in enumerate(["user", "assistant"] * 3)]
    assert trim_history(history, None) == history
    assert trim_history(history, 0) == []
    assert [m["content"] for m in trim_history(history, 1)] == ["4", "5"]
    assert trim_history(history, 10) == history
