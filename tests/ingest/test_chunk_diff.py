"""app/domain/chunk_diff.py: which chunks of a new text are new, with the real chunker and tokenizer."""

from __future__ import annotations

from functools import partial

from app.domain.chunk_diff import OldChunk, diff_chunks
from app.domain.chunking import chunk_text
from app.providers.tokenizer import get_tokenizer

TOKENIZER = get_tokenizer()
CHUNK = partial(chunk_text, TOKENIZER, size=40, overlap=6)


def paragraphs(n: int, changed: dict[int, str] | None = None) -> str:
    texts = [f"Paragraph {i} tells how keeper {i} logged the tides at station {i} for many years." for i in range(n)]
    for i, text in (changed or {}).items():
        texts[i] = text
    return "\n\n".join(t for t in texts if t)


def old_chunks(text: str) -> list[OldChunk]:
    return [OldChunk(f"c{c.order_index}", c.content, c.start_token, c.end_token) for c in CHUNK(text)]


def diff(old_text: str, new_text: str):
    return diff_chunks(old_text, old_chunks(old_text), new_text, CHUNK, lambda t: len(TOKENIZER.encode(t)))


def test_same_text_reuses_every_chunk():
    text = paragraphs(30)
    result = diff(text, text)
    assert not result.added and not result.removed and result.reused == len(old_chunks(text))


def test_two_edits_far_apart_rechunk_only_around_each():
    old = paragraphs(60)
    new = paragraphs(60, {10: "Paragraph ten was rewritten.", 50: "Paragraph fifty moved to the archive."})
    result = diff(old, new)
    total = len(old_chunks(old))
    assert total > 30 and len(result.added) <= 6 and len(result.removed) <= 6
    assert "\n\n".join(c.chunk.content for c in result.chunks if c.reused is None).count("rewritten") == 1
    assert [c.chunk.order_index for c in result.chunks] == list(range(len(result.chunks)))
    # the new chunks together with the kept ones cover the new text
    assert all(c.chunk.content in new for c in result.chunks)


def test_a_new_text_without_shared_sentences_is_all_new():
    result = diff(paragraphs(10), "Something else entirely.\n\nNothing is shared.")
    assert result.reused == 0 and len(result.removed) == len(old_chunks(paragraphs(10)))
