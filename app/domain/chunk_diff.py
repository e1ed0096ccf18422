"""Which chunks of a document's new text are new, given the chunks of its current text.

Token windows start at fixed steps from the first token, so one edit would shift every later window and
make the whole tail look new. Instead the two texts are compared sentence by sentence (and line by line):
every old chunk lying wholly in text both versions share is kept as it is (moved, if text before it grew
or shrank), and only the new text between kept chunks is chunked again — from where the first old chunk
not kept started to where the last one ended, so its windows overlap the kept ones as a full chunking's
would. A chunk of that text whose content equals a leftover old chunk reuses it too (a paragraph moved
whole). Anything else is new and must be extracted; the old chunks not reused are removed.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from itertools import accumulate

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


_UNIT = re.compile(r"(?<=[.!?\n])")  # sentences and lines: the units the two texts are compared in


def _equal_blocks(old_text: str, new_text: str) -> list[tuple[int, int, int]]:
    """(old start, new start, length) of the character ranges the texts share, found by comparing them
    sentence by sentence (and line by line), in order."""
    old_units, new_units = _UNIT.split(old_text), _UNIT.split(new_text)
    old_at = list(accumulate((len(u) for u in old_units), initial=0))
    new_at = list(accumulate((len(u) for u in new_units), initial=0))
    matcher = SequenceMatcher(None, old_units, new_units, autojunk=False)
    return [
        (old_at[a], new_at[b], old_at[a + size] - old_at[a]) for a, b, size in matcher.get_matching_blocks() if size
    ]


class _Map:
    """Old character positions inside shared ranges → the same position in the new text."""

    def __init__(self, blocks: list[tuple[int, int, int]]) -> None:
        self.blocks = blocks
        self.starts = [b[0] for b in blocks]

    def block_of(self, start: int, end: int) -> tuple[int, int, int] | None:
        """The shared range holding old characters [start, end), if one does."""
        i = bisect_right(self.starts, start) - 1
        if i >= 0:
            a, b, size = self.blocks[i]
            if end <= a + size:
                return self.blocks[i]
        return None

    def new_position(self, old: int) -> int | None:
        block = self.block_of(old, old)
        return None if block is None else block[1] + old - block[0]


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
    found = _spans(old_text, old)
    spans = found or []  # None is not expected (chunks are slices of their text): then everything is new
    n = len(spans)
    where = _Map(_equal_blocks(old_text, new_text) if found else [])
    kept_at: dict[int, int] = {}  # old index → its new start
    if found:
        for i, (start, end) in enumerate(spans):
            block = where.block_of(start, end)
            if block is not None:
                kept_at[i] = block[1] + start - block[0]

    # the new text between kept chunks, to chunk again: from where the first old chunk not kept started
    # (inside the kept one before it, when the windows overlapped there) to where the last one ended
    regions: list[tuple[int, int, int]] = []  # (new start, new end, index of the kept chunk after, or len)
    previous: int | None = None
    for i in [*sorted(kept_at), n]:
        gap = range((previous + 1) if previous is not None else 0, i)
        after_prev = kept_at[previous] + spans[previous][1] - spans[previous][0] if previous is not None else 0
        before_next = kept_at[i] if i < n else len(new_text)
        start, end = after_prev, before_next
        if len(gap):
            first_new = where.new_position(spans[gap[0]][0])
            last_new = where.new_position(spans[gap[-1]][1])
            if first_new is not None and previous is not None and kept_at[previous] <= first_new < after_prev:
                start = first_new
            if (
                last_new is not None
                and i < len(spans)
                and before_next < last_new <= before_next + spans[i][1] - spans[i][0]
            ):
                end = last_new
        if new_text[start:end].strip() and (len(gap) or end > start):
            regions.append((start, max(end, start), i))
        previous = i if i < n else previous

    pieces: dict[int, list[Chunk]] = {}
    for start, end, i in regions:
        middle = chunker(new_text[start:end])
        # a window lying wholly in the overlap with a kept neighbour would be a chunk inside another
        if middle and i < n and middle[-1].content in old[i].content:
            middle.pop()
        before = max((k for k in kept_at if k < i), default=None)
        if middle and before is not None and middle[0].content in old[before].content:
            middle.pop(0)
        offset = token_count(new_text[:start]) if middle and start else 0
        pieces.setdefault(i, []).extend(
            replace(p, start_token=p.start_token + offset, end_token=p.end_token + offset) for p in middle
        )

    leftovers: dict[str, list[str]] = {}
    for i, chunk in enumerate(old):
        if i not in kept_at:
            leftovers.setdefault(chunk.content, []).append(chunk.id)
    shift_cache: dict[int, int] = {}

    def shift(i: int) -> int:
        """Tokens the kept chunk i moved by (text before it grew or shrank)."""
        if i not in shift_cache:
            moved = kept_at[i] != spans[i][0]
            shift_cache[i] = token_count(new_text[: kept_at[i]]) - token_count(old_text[: spans[i][0]]) if moved else 0
        return shift_cache[i]

    out: list[NewChunk] = []

    def add(chunk: Chunk, reused: str | None) -> None:
        out.append(NewChunk(replace(chunk, order_index=len(out)), reused))

    for i in [*sorted(kept_at), n]:
        for piece in pieces.get(i, []):
            same = leftovers.get(piece.content)
            add(piece, same.pop(0) if same else None)
        if i < n:
            o, d = old[i], shift(i)
            add(Chunk(0, o.end_token - o.start_token, o.start_token + d, o.end_token + d, o.content), o.id)
    reused = {c.reused for c in out if c.reused is not None}
    return ChunkDiff(out, [o.id for o in old if o.id not in reused])
