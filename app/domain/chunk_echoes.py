"""Graph descriptions that only echo the chunks shown beside them.

An entity's or relation's description is drawn from the chunks that mention it, often sentence for sentence.
Once such a chunk is in the context, repeating its sentences in the graph lines costs tokens and tells the
answer model nothing new; left out, they make room for graph lines whose chunks could not be shown, which is
where the graph adds to the chunks. Only sentences found word for word (case and spacing aside) in a shown
chunk are left out, so a paraphrased description (as a model writes them) stays whole.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TypeVar

from app.domain.hits import ChunkHit, EntityHit, RelationHit
from app.domain.texts import fragments, join_fragments

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_SPACE = re.compile(r"\s+")

Item = TypeVar("Item", EntityHit, RelationHit)


def _normal(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


class ShownText:
    """The chunks' texts, normalised once, asked whether a sentence appears in one of them."""

    def __init__(self, chunks: Sequence[ChunkHit]) -> None:
        self._text = "\n".join(_normal(c.content) for c in chunks)  # a normalised sentence never spans a newline

    def says(self, sentence: str) -> bool:
        normal = _normal(sentence)
        return bool(normal) and normal in self._text


def unsaid(description: str, shown: ShownText) -> str:
    """The description without the sentences the shown chunks already hold (its fragments kept apart)."""
    kept: list[str] = []
    for fragment in fragments(description):
        sentences = [s for s in _SENTENCE_END.split(fragment.strip()) if s]
        rest = [s for s in sentences if not shown.says(s)]
        if len(rest) == len(sentences):
            kept.append(fragment)
        elif rest:
            kept.append(" ".join(rest))
    return join_fragments(kept)


def without_echoes(items: Sequence[Item], shown: ShownText) -> list[Item]:
    """The items with what the shown chunks already say left out of their descriptions. An item whose whole
    description is said there stays, with an empty description: that it was found (its name, its ends, its
    keywords) is still worth its short line, and the context lists every graph item it relied on."""
    out: list[Item] = []
    for item in items:
        rest = unsaid(item.description, shown)
        out.append(item if rest == item.description else replace(item, description=rest))
    return out
