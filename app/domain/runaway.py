"""Answers that run away: a model that loops writes the same lines (or words) again and again until its
completion cap or its context window stops it. What it wrote before the loop is kept, the repeats are not.
"""

from __future__ import annotations

import re

# A block of up to MAX_BLOCK_LINES lines written LINE_REPEATS times in a row is a loop; so is a run of up to
# MAX_BLOCK_WORDS words written WORD_REPEATS times in a row (a loop inside one endless line).
MAX_BLOCK_LINES = 12
LINE_REPEATS = 3
MAX_BLOCK_WORDS = 40
WORD_REPEATS = 5
# Short blocks repeat legitimately ("}" closing nested JSON, "ha ha ha"): a loop's block is longer.
MIN_BLOCK_CHARS = 12
_WORD = re.compile(r"\S+")


def loop_start(text: str) -> int | None:
    """The offset in `text` where a loop's first repeat begins (the text before it holds one copy of the
    repeated block), or None when the text does not repeat itself."""
    by_lines = _line_loop(text)
    by_words = _word_loop(text)
    found = [offset for offset in (by_lines, by_words) if offset is not None]
    return min(found) if found else None


def trim_loop(text: str) -> tuple[str, bool]:
    """`text` up to its loop, and whether there was one."""
    start = loop_start(text)
    return (text, False) if start is None else (text[:start], True)


def _repeats(items: list[str], start: int, size: int, copies: int) -> bool:
    block = items[start : start + size]
    if not all(items[start + k * size : start + (k + 1) * size] == block for k in range(1, copies)):
        return False
    return sum(len(item) for item in block) >= MIN_BLOCK_CHARS


def _first_repeat(items: list[str], max_block: int, copies: int) -> tuple[int, int] | None:
    """(index of the block's first item, block size) of the earliest block repeated `copies` times."""
    following: list[int | None] = [None] * len(items)  # the next index holding the same item
    last_seen: dict[str, int] = {}
    for index in range(len(items) - 1, -1, -1):
        following[index] = last_seen.get(items[index])
        last_seen[items[index]] = index
    for start in range(len(items)):
        # a block repeated right after itself starts again where its first item comes back
        later = following[start]
        while later is not None and later - start <= max_block:
            size = later - start
            if start + size * copies > len(items):
                break
            if _repeats(items, start, size, copies):
                return start, size
            later = following[later]
    return None


def _line_loop(text: str) -> int | None:
    lines = text.splitlines(keepends=True)
    normalised = [" ".join(line.split()) for line in lines]
    found = _first_repeat(normalised, MAX_BLOCK_LINES, LINE_REPEATS)
    if found is None:
        return None
    start, size = found
    return sum(len(line) for line in lines[: start + size])


def _word_loop(text: str) -> int | None:
    matches = list(_WORD.finditer(text))
    words = [m.group(0) for m in matches]
    found = _first_repeat(words, MAX_BLOCK_WORDS, WORD_REPEATS)
    if found is None:
        return None
    start, size = found
    return matches[start + size].start()
