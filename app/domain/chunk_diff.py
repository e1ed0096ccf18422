"""Which chunks of a document's new text are new, given the chunks of its current text.

Token windows start at fixed steps from the first token, so one edit would shift every later window and
make the whole tail look new. Instead the old chunks lying wholly in the text both versions share at the
start (common prefix) and at the end (common suffix) are kept as they are, and only the text between them
is chunked again. A chunk of that middle whose content equals a leftover old chunk reuses it too (a
paragraph moved whole). Anything else is new and must be extracted; the old chunks not reused are removed.

One edit region per update: two edits far apart re-chunk the text between them (still correct, less
saved). The middle starts and ends inside the kept neighbours where the old windows overlapped them, so a
name cut by one window is still whole in the next, as in a full chunking.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from app.domain.chunking import Chunk


@dataclass(frozen=True)
class OldChunk:
    id: str
    content: str
    start_token: int
    end_token: int


@dataclass(frozen=True)
class NewChunk:
    chunk: Chunk  # order_index and token offsets in the new text
    reused: str | None  # the old chunk id it keeps (its extraction and provenance), or None: extract it


@dataclass(frozen=True)
class ChunkDiff:
    chunks: list[NewChunk]
    removed: list[str]  # old chunk ids no longer in the document

    @property
    def added(self) -> list[Chunk]:
        return [c.chunk for c in self.chunks if c.reused is None]

    @property
    def reused(self) -> int:
        return sum(1 for c in self.chunks if c.reused is not None)


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _common_suffix(a: str, b: str, limit: int) -> int:
    i = 0
    while i < limit and a[-1 - i] == b[-1 - i]:
        i += 1
    return i


def _spans(text: str, old: list[OldChunk]) -> list[tuple[int, int]] | None:
    """Character span of each old chunk in the old text (chunks are stripped slices, in order)."""
    spans, cursor = [], 0
    for chunk in old:
        at = text.find(chunk.content, cursor)
        if at < 0:
            return None
        spans.append((at, at + len(chunk.content)))
        cursor = at + 1
    return spans


def diff_chunks(
    old_text: str,
    old: list[OldChunk],
    new_text: str,
    chunker: Callable[[str], list[Chunk]],
    token_count: Callable[[str], int],
) -> ChunkDiff:
    """The new text's chunks, each reusing an old chunk or new, and the old chunks removed."""
    prefix = _common_prefix(old_text, new_text)
    suffix = _common_suffix(old_text, new_text, min(len(old_text), len(new_text)) - prefix)
    spans = _spans(old_text, old)
    head: list[int] = []
    tail: list[int] = []
    if spans is not None:
        for i, (_, end) in enumerate(spans):
            if end > prefix:
                break
            head.append(i)
        head_end_char = spans[head[-1]][1] if head else 0
        for i in range(len(old) - 1, len(head) - 1, -1):
            if spans[i][0] < len(old_text) - suffix or spans[i][0] < head_end_char:
                break
            tail.insert(0, i)
    delta = len(new_text) - len(old_text)
    start, end = 0, len(new_text)
    if spans is not None:
        # the middle starts where the first old chunk not kept started and ends where the last one ended,
        # when those points lie in the shared text: its windows then overlap the kept ones as before
        first, last = len(head), (tail[0] if tail else len(old)) - 1
        head_end = spans[head[-1]][1] if head else 0
        tail_start = spans[tail[0]][0] if tail else len(old_text)
        start = spans[first][0] if first <= last and spans[first][0] < head_end else head_end
        end_old = spans[last][1] if first <= last and spans[last][1] > tail_start else tail_start
        end = (end_old if end_old >= len(old_text) - suffix else tail_start) + delta
        end = max(end, start)

    middle_text = new_text[start:end]
    middle = chunker(middle_text) if middle_text.strip() else []
    middle_offset = token_count(new_text[:start]) if middle and start else 0
    shift = token_count(new_text) - token_count(old_text) if tail else 0

    leftovers: dict[str, list[str]] = {}
    kept = set(head) | set(tail)
    for i, chunk in enumerate(old):
        if i not in kept:
            leftovers.setdefault(chunk.content, []).append(chunk.id)

    out: list[NewChunk] = []

    def add(chunk: Chunk, reused: str | None) -> None:
        out.append(NewChunk(replace(chunk, order_index=len(out)), reused))

    for i in head:
        o = old[i]
        add(Chunk(0, o.end_token - o.start_token, o.start_token, o.end_token, o.content), o.id)
    for piece in middle:
        same = leftovers.get(piece.content)
        moved = replace(piece, start_token=piece.start_token + middle_offset, end_token=piece.end_token + middle_offset)
        add(moved, same.pop(0) if same else None)
    for i in tail:
        o = old[i]
        add(Chunk(0, o.end_token - o.start_token, o.start_token + shift, o.end_token + shift, o.content), o.id)
    reused = {c.reused for c in out if c.reused is not None}
    return ChunkDiff(out, [o.id for o in old if o.id not in reused])
