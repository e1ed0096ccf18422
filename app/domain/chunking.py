"""Fixed-token chunking (official LightRAG "F" strategy) with exact token offsets.

The document is encoded once. Every chunk is a window `[start_token, end_token)` of that one token
sequence, and its content is the matching slice of the original text (stripped), so a citation can
point back into the document and no multi-byte character is ever cut into replacement glyphs.

Differences from the official chunker: no tail window that lies entirely inside the previous one
(official LightRAG emits it: a duplicate chunk), and chunks split on a character keep offsets into the whole document.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from app.core.errors import InvalidInput
from app.domain.tokens import Tokenizer


@dataclass
class Chunk:
    order_index: int
    tokens: int  # end_token - start_token: tokens of the window before stripping
    start_token: int  # offsets into the document's token sequence
    end_token: int
    content: str


def chunk_id(doc_id: str, order: int) -> str:
    """Official 1.5.x chunk id scheme."""
    return f"{doc_id}-chunk-{order:03d}"


class _Encoded:
    """The document's tokens plus, per token, the character offset where it starts."""

    def __init__(self, tokenizer: Tokenizer, text: str) -> None:
        self.tokens = tokenizer.encode(text)
        pieces = tokenizer.token_bytes(self.tokens)
        offsets: list[int] = []
        position = 0
        for piece in pieces:
            offsets.append(position)
            # a character belongs to the token holding its lead byte (continuation bytes are 0b10xxxxxx)
            position += len(piece) if piece.isascii() else sum(1 for b in piece if b < 0x80 or b >= 0xC0)
        offsets.append(position)
        if position != len(text):  # text held something tiktoken replaced (lone surrogates): use its view
            text = b"".join(pieces).decode("utf-8", errors="replace")
        self.text = text
        self.offsets = offsets

    def token_at(self, char: int) -> int:
        """Index of the token containing character `char` (len(tokens) at the end)."""
        return max(bisect_right(self.offsets, char) - 1, 0) if char < len(self.text) else len(self.tokens)

    def token_after(self, char: int) -> int:
        """First token that starts at or after character `char` (exclusive end of a span)."""
        index = self.token_at(char)
        return index if index >= len(self.tokens) or self.offsets[index] >= char else index + 1

    def slice(self, start: int, end: int, lo: int = 0, hi: int | None = None) -> str:
        """Text of tokens [start, end), clipped to characters [lo, hi)."""
        hi = len(self.text) if hi is None else hi
        return self.text[max(self.offsets[start], lo) : min(self.offsets[end], hi)]


def _windows(start: int, end: int, size: int, step: int) -> list[tuple[int, int]]:
    """Windows over [start, end); stops once a window reaches the end, so none is contained in another."""
    spans: list[tuple[int, int]] = []
    position = start
    while position < end:
        stop = min(position + size, end)
        spans.append((position, stop))
        if stop >= end:
            break
        position += step
    return spans


def _segments(text: str, separator: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    position = 0
    for piece in text.split(separator):
        spans.append((position, position + len(piece)))
        position += len(piece) + len(separator)
    return spans


def chunk_text(
    tokenizer: Tokenizer,
    text: str,
    *,
    size: int,
    overlap: int,
    split_by: str | None = None,
    split_only: bool = False,
) -> list[Chunk]:
    if size < 1:
        raise InvalidInput(f"chunk size must be positive, got {size}", code="invalid_chunking")
    if overlap < 0 or overlap >= size:
        raise InvalidInput(
            f"chunk overlap must be >= 0 and smaller than the chunk size ({overlap} vs {size})",
            code="invalid_chunking",
        )
    doc = _Encoded(tokenizer, text)
    step = size - overlap
    pieces: list[tuple[int, int, str]] = []  # (start_token, end_token, content)
    if not split_by:
        for start, end in _windows(0, len(doc.tokens), size, step):
            pieces.append((start, end, doc.slice(start, end)))
    else:
        for lo, hi in _segments(doc.text, split_by):
            segment = doc.text[lo:hi]
            if not segment.strip():
                continue
            first, last = doc.token_at(lo), doc.token_after(hi)
            if last - first <= size:
                pieces.append((first, last, segment))
            elif split_only:
                raise InvalidInput(
                    f"a segment split on {split_by!r} has {last - first} tokens, more than the chunk size {size}",
                    code="chunk_too_large",
                )
            else:
                for start, end in _windows(first, last, size, step):
                    pieces.append((start, end, doc.slice(start, end, lo, hi)))
    chunks: list[Chunk] = []
    for start, end, content in pieces:
        content = content.strip()
        if content:
            chunks.append(Chunk(len(chunks), end - start, start, end, content))
    return chunks
