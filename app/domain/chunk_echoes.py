"""Graph descriptions that only echo the chunks shown beside them.

An entity's or relation's description is drawn from the chunks that mention it, often sentence for sentence.
Once such a chunk is in the context, repeating its sentences in the graph lines costs tokens and tells the
answer model nothing new; left out, they make room for graph lines whose chunks could not be shown, which is
where the graph adds to the chunks. Only sentences found word for word (spacing aside) in a shown chunk are
left out, so a paraphrased description (as a model writes them) stays whole.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TypeVar

from app.domain.hits import ChunkHit, EntityHit, RelationHit
from app.domain.texts import fragments, join_fragments

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")

Item = TypeVar("Item", EntityHit, RelationHit)


MIN_WORDS = 4  # a shorter piece ("Dr.", "Mary.") is no sentence of its own (see `sentences`)


def _normal(text: str) -> str:
    """Whitespace runs as one space, none at the ends. str.split's whitespace is re's \\s (tested on every code
    point), and splitting a chunk's text is several times cheaper than a regex substitution per space."""
    return " ".join(text.split())


def sentences(fragment: str) -> list[str]:
    """The fragment's sentences; a piece of fewer than MIN_WORDS words (an abbreviation's full stop split it
    off) is glued to the piece before it (to the next one at the start), so it is never matched on its own."""
    out: list[str] = []
    pending = ""
    for piece in _SENTENCE_END.split(fragment.strip()):
        piece, pending = (f"{pending} {piece}" if pending else piece), ""
        if len(piece.split()) >= MIN_WORDS:
            out.append(piece)
        elif out:
            out[-1] = f"{out[-1]} {piece}"
        else:
            pending = piece
    return [*out, pending] if pending else out


class ShownText:
    """The shown chunks' texts by id, each normalised once, when a graph item first cites it (a shown chunk no
    item cites is never searched)."""

    def __init__(self, chunks: Sequence[ChunkHit] = (), contents: Mapping[str, str] | None = None) -> None:
        """The shown chunks as hits, or as id → content (`contents`: a tool's JSON result)."""
        self._contents = dict(contents) if contents is not None else {c.id: c.content for c in chunks}
        self._texts: dict[str, str] = {}

    def _text(self, chunk_id: str) -> str:
        found = self._texts.get(chunk_id)
        if found is None:
            found = self._texts[chunk_id] = _normal(self._contents[chunk_id])
        return found

    def of(self, chunk_ids: Sequence[str]) -> list[str]:
        """The texts of those of `chunk_ids` that are shown."""
        return [self._text(c) for c in dict.fromkeys(chunk_ids) if c in self._contents]


def unsaid(description: str, texts: Sequence[str]) -> str:
    """The description without the sentences `texts` already hold (its fragments kept apart)."""
    kept: list[str] = []
    for fragment in fragments(description):
        parts = sentences(fragment)
        rest = [s for s in parts if not any(_normal(s) in text for text in texts)]
        if len(rest) == len(parts):
            kept.append(fragment)
        elif rest:
            kept.append(" ".join(rest))
    return join_fragments(kept)


def without_echoes(items: Sequence[Item], shown: ShownText) -> list[Item]:
    """The items with what their shown source chunks already say left out of their descriptions (a description
    is drawn from the item's own chunks, so only those are searched: a few texts, not the whole context). An
    item whose whole description is said there stays, with an empty description: that it was found (its name,
    its ends, its keywords) is still worth its short line, and the context lists every graph item it relied on."""
    out: list[Item] = []
    for item in items:
        rest = unechoed(item.description, item.chunk_ids, shown)
        out.append(item if rest == item.description else replace(item, description=rest))
    return out


def unechoed(description: str, chunk_ids: Sequence[str], shown: ShownText) -> str:
    """The description less what those of its source chunks `chunk_ids` that are shown already say."""
    texts = shown.of(chunk_ids)
    return unsaid(description, texts) if texts else description
