"""Inline citation markers in model answers.

The answer prompt names every context chunk `c1`, `c2`, … and asks for markers such as `[c3]`. Models write
them in many forms — `[c3]`, `[C3]`, `[3]`, `[^3]`, `(c3)`, `【c3】`, `[c1, c3]`, `[c1][c3]`, alone on a line —
so all of those are read. A `c` number names a chunk; a bare number names a document of the reference list
(the style of the previous prompt, still common). Markers are rewritten as the document reference numbers
(`[1][3]`) that the `references` list and the chat footnotes use; a marker naming nothing in the context is
dropped. The same rewrite runs on a whole answer and, through `MarkerStream`, on an answer being streamed,
with identical results.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_REF = r"(?:c(?:hunk)?[ ]?\d{1,4}|\^?\d{1,4})"
_LIST = rf"{_REF}(?:\s*[,;]\s*{_REF})*"
_ONE = (
    rf"(?:\[\s*\^?{_LIST}\s*\]|【\s*{_LIST}\s*】"
    r"|\(\s*c(?:hunk)?[ ]?\d{1,4}(?:\s*[,;]\s*c(?:hunk)?[ ]?\d{1,4})*\s*\))"
)
_RUN = rf"{_ONE}(?:[ \t]*{_ONE})*"
_MARKERS = re.compile(rf"(?P<own>\n[ \t]*{_RUN}[ \t]*(?=\n|\Z))|(?P<inline>[ \t]*{_RUN})", re.IGNORECASE)
_REF_PARTS = re.compile(r"(c(?:hunk)?[ ]?)?\^?(\d{1,4})", re.IGNORECASE)
_ONE_AT_END = re.compile(rf"{_ONE}\s*\Z", re.IGNORECASE)
_OPENERS = "[(【"
_CLOSERS = "])】"
_OPEN_WINDOW = 40  # an opener this close to the end of a streamed piece may start a marker: hold it back


@dataclass(frozen=True)
class MarkerContext:
    """What markers may name: each context chunk's document reference id (in context order), and the ids."""

    chunk_documents: Sequence[str]
    reference_ids: frozenset[str]


@dataclass(frozen=True)
class Mark:
    """A marker kept in the rewritten answer: where it is, the chunks (0-based) and documents it names."""

    start: int
    end: int
    chunks: tuple[int, ...]
    documents: tuple[str, ...]


def _resolve(marker: str, ctx: MarkerContext) -> tuple[list[int], list[str], bool]:
    """(chunks, documents named, whether any part used the chunk form)."""
    chunks: list[int] = []
    documents: list[str] = []
    chunk_form = False
    for prefix, number in _REF_PARTS.findall(marker):
        n = int(number)
        if prefix:
            chunk_form = True
            if 1 <= n <= len(ctx.chunk_documents) and n - 1 not in chunks:
                chunks.append(n - 1)
                documents.append(ctx.chunk_documents[n - 1])
        elif number.lstrip("0") in ctx.reference_ids:
            documents.append(number.lstrip("0"))
    return chunks, list(dict.fromkeys(documents)), chunk_form


def rewrite_markers(text: str, ctx: MarkerContext, before: str = "") -> tuple[str, list[Mark]]:
    """`text` with its markers as `[n]` document references (unknown ones dropped), and the kept marks.
    `before` is the character preceding `text` (when it is a piece of a longer answer)."""
    out: list[str] = []
    marks: list[Mark] = []
    length = 0
    last = 0
    for match in _MARKERS.finditer(text):
        raw = match.group(0)
        chunks, documents, chunk_form = _resolve(raw, ctx)
        previous = (text[match.start() - 1] if match.start() else before) if raw[:1] not in " \t\n" else " "
        following = text[match.end() : match.end() + 1]
        if not chunk_form and (previous.isalnum() or following == "("):
            continue  # "x[3]" or a link "[1](…)": not a marker
        out.append(text[last : match.start()])
        length += match.start() - last
        last = match.end()
        if not documents:
            continue
        lead = " " if match.group("own") or raw[:1] in " \t" else ""
        rendered = lead + "".join(f"[{d}]" for d in documents)
        out.append(rendered)
        marks.append(Mark(length + len(lead), length + len(rendered), tuple(chunks), tuple(documents)))
        length += len(rendered)
    out.append(text[last:])
    return "".join(out), marks


def _safe_cut(text: str) -> int:
    """How much of a streamed answer can be rewritten now: not its trailing whitespace, not a marker it ends
    with (another may follow), not an opener that may still become a marker."""
    end = len(text.rstrip())
    while True:
        window = text[max(0, end - _OPEN_WINDOW) : end]
        opener = max(window.rfind(o) for o in _OPENERS)
        if opener >= 0 and not any(c in window[opener:] for c in _CLOSERS):
            end = len(text[: end - len(window) + opener].rstrip())
            continue
        found = _ONE_AT_END.search(text[:end])
        if found is None:
            return end
        end = len(text[: found.start()].rstrip())


class MarkerStream:
    """Rewrites markers in an answer arriving piece by piece; `feed` each piece, then `flush` once."""

    def __init__(self, ctx: MarkerContext) -> None:
        self.ctx = ctx
        self._held = ""
        self._before = ""

    def feed(self, piece: str) -> str:
        self._held += piece
        cut = _safe_cut(self._held)
        if cut == 0:
            return ""
        ready, self._held = self._held[:cut], self._held[cut:]
        return self._emit(ready)

    def flush(self) -> str:
        ready, self._held = self._held, ""
        return self._emit(ready) if ready else ""

    def _emit(self, ready: str) -> str:
        text, _ = rewrite_markers(ready, self.ctx, self._before)
        self._before = ready[-1:]
        return text
