"""Fixed-token chunking: official windows, exact token offsets, no contained tail, split characters."""

from __future__ import annotations

import time

import pytest

from app.core.errors import InvalidInput
from app.domain.chunking import chunk_id, chunk_text
from app.providers.tokenizer import get_tokenizer


@pytest.fixture(scope="module")
def tok():
    return get_tokenizer("o200k_base")


def _numbers(n: int) -> str:
    # " 1 2 3 ..." gives a predictable token stream; the exact count is read from the tokenizer
    return " ".join(f"w{i}" for i in range(n))


def test_official_windows_and_offsets(tok):
    text = _numbers(600)
    tokens = tok.encode(text)
    chunks = chunk_text(tok, text, size=100, overlap=20)
    assert [c.start_token for c in chunks] == list(range(0, len(tokens), 80))[: len(chunks)]
    assert chunks[0].start_token == 0 and chunks[-1].end_token == len(tokens)
    for c in chunks:
        assert c.tokens == c.end_token - c.start_token <= 100
        assert c.content == tok.decode(tokens[c.start_token : c.end_token]).strip()
    assert [c.order_index for c in chunks] == list(range(len(chunks)))


def test_no_tail_chunk_contained_in_previous_window(tok):
    text = _numbers(300)
    total = len(tok.encode(text))
    size, overlap = total - 20, 50  # official would add a last window [size-overlap, total) inside the first
    chunks = chunk_text(tok, text, size=size, overlap=overlap)
    assert len(chunks) == 2
    assert (chunks[0].start_token, chunks[0].end_token) == (0, size)
    assert (chunks[1].start_token, chunks[1].end_token) == (size - overlap, total)
    # remainder smaller than the overlap: the first window already reaches the end
    small = chunk_text(tok, text, size=total + 10, overlap=50)
    assert [(c.start_token, c.end_token) for c in small] == [(0, total)]


def test_content_is_stripped_and_whitespace_only_windows_dropped(tok):
    text = "alpha beta" + " " * 400 + "gamma"
    chunks = chunk_text(tok, text, size=8, overlap=2)
    assert all(c.content == c.content.strip() and c.content for c in chunks)
    assert chunks[0].content.startswith("alpha")
    assert chunks[-1].content.endswith("gamma")
    assert [c.order_index for c in chunks] == list(range(len(chunks)))


def test_multibyte_characters_never_become_replacement_glyphs(tok):
    text = "東京タワーと富士山😀の写真。" * 80
    chunks = chunk_text(tok, text, size=7, overlap=2)
    assert len(chunks) > 10
    assert all("\ufffd" not in c.content for c in chunks)
    assert "".join(c.content for c in chunks[::1]).count("富士山") >= 80


def test_split_by_character_keeps_segments_and_document_offsets(tok):
    text = "First part.\n\nSecond part is here.\n\n\n\nThird."
    chunks = chunk_text(tok, text, size=50, overlap=5, split_by="\n\n")
    assert [c.content for c in chunks] == ["First part.", "Second part is here.", "Third."]
    tokens = tok.encode(text)
    for c in chunks:
        assert c.content in tok.decode(tokens[c.start_token : c.end_token])
    assert chunks[0].start_token == 0 and chunks[-1].end_token == len(tokens)
    assert [c.order_index for c in chunks] == [0, 1, 2]  # the empty segment leaves no gap


def test_split_by_character_windows_oversize_segments(tok):
    big = _numbers(200)
    text = f"short\n{big}\ntail"
    tokens = tok.encode(text)
    chunks = chunk_text(tok, text, size=60, overlap=10, split_by="\n")
    assert chunks[0].content == "short" and chunks[-1].content == "tail"
    middle = chunks[1:-1]
    assert len(middle) >= 4
    assert all(c.tokens <= 60 for c in middle)
    assert all("short" not in c.content and "tail" not in c.content for c in middle)
    assert [b.start_token - a.start_token for a, b in zip(middle, middle[1:], strict=False)] == [50] * (len(middle) - 1)
    assert middle[0].content.startswith("w0 ") and middle[-1].content.endswith("w199")
    assert middle[-1].end_token <= len(tokens)


def test_split_only_rejects_oversize_segment(tok):
    text = "ok\n" + _numbers(100)
    with pytest.raises(InvalidInput) as err:
        chunk_text(tok, text, size=20, overlap=5, split_by="\n", split_only=True)
    assert err.value.status_code == 422 and err.value.code == "chunk_too_large"
    fine = chunk_text(tok, "a\nb b\n\nc", size=20, overlap=5, split_by="\n", split_only=True)
    assert [c.content for c in fine] == ["a", "b b", "c"]


@pytest.mark.parametrize(("size", "overlap"), [(10, 10), (10, 12), (10, -1), (0, 0)])
def test_bad_sizes_are_invalid_input(tok, size, overlap):
    with pytest.raises(InvalidInput):
        chunk_text(tok, "some text", size=size, overlap=overlap)


def test_empty_text_gives_no_chunks(tok):
    assert chunk_text(tok, "", size=100, overlap=10) == []
    assert chunk_text(tok, "  \n\t ", size=100, overlap=10) == []
    assert chunk_text(tok, "\n\n\n", size=100, overlap=10, split_by="\n") == []


def test_hundred_thousand_tokens_is_fast(tok):
    text = "The quick brown fox jumps over the lazy dog near the river bank. " * 7700
    started = time.perf_counter()
    chunks = chunk_text(tok, text, size=1200, overlap=100)
    elapsed = time.perf_counter() - started
    total = len(tok.encode(text))
    assert total >= 100_000
    assert chunks[-1].end_token == total
    assert len(chunks) == -(-(total - 100) // 1100)
    assert elapsed < 5  # generous bound for a slow CI box; measured ~0.1 s here


def test_chunk_id_scheme():
    assert chunk_id("doc-abc", 7) == "doc-abc-chunk-007"
    assert chunk_id("doc-abc", 1234) == "doc-abc-chunk-1234"
