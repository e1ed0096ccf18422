"""The cheaper forms of the context's Python work give what the plain forms gave: the word sets of chunk
diversity, the echo check's whitespace normalisation, the JSON lines, the cached token counts and chunk lines."""

from __future__ import annotations

import json
import random
import re
import sys

from app.domain import context_budget
from app.domain.chunk_diversity import word_set
from app.domain.chunk_echoes import ShownText, _normal
from app.domain.context_budget import TokenLedger, chunk_line, entity_line, relation_line
from app.domain.hits import ChunkHit, EntityHit, RelationHit
from app.domain.texts import SEP, readable
from app.providers.tokenizer import get_tokenizer

SAMPLES = [
    "",
    "  plain words, a comma; and_underscores 42 times\t\ttabs\nnew\r\nlines  ",
    "Ünïcode words: Straße, İstanbul, naïve café — ½ and ² and ٣ digits",
    "KELVIN \u212a and \u00a0no-break\u2003em\u2028line\u3000ideographic\x1c\x1d\x1e\x1f separators",
    '{"json": "quoted \\"text\\"", "emoji": "\U0001f600", "ctrl": "\x00\x07"}',
]


def random_texts(n: int) -> list[str]:
    rng = random.Random(5)
    alphabet = [chr(c) for c in range(128)] + list("äßİıﬁ\u212a\u00a0\u2003\u3000½²٣")
    return [
        SAMPLES[i % len(SAMPLES)] + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 300))) for i in range(n)
    ]


def test_word_sets_equal_the_regex_words_of_the_lowered_text():
    every_ascii = "".join(chr(c) for c in range(128)) * 2
    for text in [*SAMPLES, every_ascii, *random_texts(300)]:
        assert word_set(text) == frozenset(re.findall(r"\w+", text.lower()))


def test_normalised_text_equals_the_regex_substitution_on_every_code_point():
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    regex_spaces = set(re.findall(r"\s", every))
    assert regex_spaces == {c for c in every if c.isspace()}  # what str.split splits at
    space = re.compile(r"\s+")
    for text in [*SAMPLES, *random_texts(300), *(f"a{c}{c}b {c}" for c in sorted(regex_spaces))]:
        assert _normal(text) == space.sub(" ", text).strip()


def test_shown_text_normalises_only_the_chunks_asked_for_and_keeps_the_last_of_an_id():
    chunks = [ChunkHit(f"c{i}", "doc", f"text  {i}\n", None, "vector") for i in range(3)]
    chunks.append(ChunkHit("c1", "doc", "later   one", None, "vector"))
    shown = ShownText(chunks)
    assert shown.of(["c2", "missing", "c1", "c2"]) == ["text 2", "later one"]
    assert shown.of([]) == []


def test_lines_equal_json_dumps():
    for text in [*SAMPLES, *random_texts(50), f"first{SEP}second"]:
        e = EntityHit("k", text[:20], "type", text, 1, [], [])
        r = RelationHit("a", "b", text[:10], text[10:20], text[:5], text, 1.0, [])
        c = ChunkHit("c", "doc", text, None, "vector")
        assert entity_line(e) == json.dumps(
            {"entity": e.name, "type": e.entity_type, "description": readable(text)}, ensure_ascii=False
        )
        assert relation_line(r) == json.dumps(
            {"entity1": r.src_name, "entity2": r.tgt_name, "keywords": r.keywords, "description": readable(text)},
            ensure_ascii=False,
        )
        assert chunk_line("3", "c7", c) == json.dumps(
            {"id": "c7", "reference_id": "3", "content": text}, ensure_ascii=False
        )


def test_counts_are_exact_from_a_fresh_ledger_and_from_the_shared_caches():
    tok = get_tokenizer()
    texts = [*SAMPLES, *random_texts(40), "x" * 255, "y" * 256, "long text " * 300]
    for _ in range(2):  # the second ledger reads what the first left in the process-wide caches
        ledger = TokenLedger(tok)
        assert [ledger.count(t) for t in texts] == [tok.count(t) for t in texts]


def test_a_short_text_is_cached_per_tokenizer():
    cache = context_budget._CountCache(10)

    class Named:
        def __init__(self, name: str, n: int) -> None:
            self.name, self.n = name, n

        def count(self, text: str) -> int:
            return self.n

    assert cache.get(Named("a", 1), "same") == 1
    assert cache.get(Named("b", 2), "same") == 2
    assert cache.get(Named("a", 3), "same") == 1


def test_chunk_segments_are_rendered_once_and_counted_as_the_first_line():
    tok = get_tokenizer()
    ledger = TokenLedger(tok)
    chunk = ChunkHit("c", "doc", 'Some "quoted" text\nover two lines.', None, "vector")
    segment = ledger.chunk_segment("12", "c34", chunk)
    assert segment == chunk_line("12", "c34", chunk) + "\n"
    assert ledger.chunk_segment("12", "c34", chunk) is segment
    assert ledger.count(segment) == tok.count(segment)
    first = ledger.chunk_segment("1", "c1", chunk)
    assert first == chunk_line("1", "c1", chunk) + "\n" and ledger.count(first) == tok.count(first)
    other = ChunkHit("c", "doc", "another text", None, "vector")  # same id, another object: its own line
    assert ledger.chunk_segment("12", "c34", other) == chunk_line("12", "c34", other) + "\n"
