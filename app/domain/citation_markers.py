"""Inline citation markers in model answers.

The answer prompt names every context chunk `c1`, `c2`, … and asks for markers such as `[c3]`. Models write
them in many forms — `[c3]`, `[C3]`, `[3]`, `[^3]`, `(c3)`, `【c3】`, `[c1, c3]`, `[c1][c3]`, alone on a line —
so all of those are read. A `c` number names a chunk; a bare number names a document of the reference list
(the style of the previous prompt, still common). Markers are rewritten as the document reference numbers
(`[1][3]`) that the `references` list and the chat footnotes use; a marker naming nothing in the context is
dropped. Code (fenced blocks, inline spans) is left as written: a `[c3]` there is code, not a citation. The
same rewrite runs on a whole answer and, through `MarkerStream`, on an answer being streamed, with identical
results.
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
_CODE_WINDOW = 200  # an inline code span still open this close to the end: hold it back until it closes
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})", re.MULTILINE)
_TICKS = re.compile(r"`+")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


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


def _fence_end(text: str, opener: re.Match[str]) -> int:
    """The end of the fenced block `opener` starts: after its closing fence line, or the text's end."""
    fence = opener.group(1)
    closing = re.compile(rf"^[ \t]{{0,3}}{fence[0]}{{{len(fence)},}}[ \t]*$", re.MULTILINE)
    line_end = text.find("\n", opener.end())
    if line_end < 0:
        return len(text)
    found = closing.search(text, line_end + 1)
    return len(text) if found is None else found.end()


def _inline_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Inline code spans in text[start:end]: a run of backticks up to the next run of as many, within a paragraph."""
    spans: list[tuple[int, int]] = []
    at = start
    while (run := _TICKS.search(text, at, end)) is not None:
        at = run.end()
        paragraph_end = _BLANK_LINE.search(text, at, end)
        limit = paragraph_end.start() if paragraph_end else end
        closing = next((m for m in _TICKS.finditer(text, at, limit) if len(m.group(0)) == len(run.group(0))), None)
        if closing is not None:
            spans.append((run.start(), closing.end()))
            at = closing.end()
    return spans


def code_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of the code in a Markdown text: fenced blocks (an unclosed one runs to the end) and inline
    spans (an unclosed backtick is text)."""
    spans: list[tuple[int, int]] = []
    at = 0
    while True:
        opener = _FENCE.search(text, at)
        stop = opener.start() if opener else len(text)
        spans += _inline_spans(text, at, stop)
        if opener is None:
            return spans
        at = _fence_end(text, opener)
        spans.append((opener.start(), at))


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


def rewrite_markers(
    text: str, ctx: MarkerContext, before: str = "", code: list[tuple[int, int]] | None = None
) -> tuple[str, list[Mark]]:
    """`text` with its markers as `[n]` document references (unknown ones dropped), and the kept marks.
    `before` is the character preceding `text` (when it is a piece of a longer answer); `code` the spans of
    `text` that are code (found in `text` when not given)."""
    code = code_spans(text) if code is None else code
    out: list[str] = []
    marks: list[Mark] = []
    length = 0
    last = 0
    for match in _MARKERS.finditer(text):
        raw = match.group(0)
        if any(start < match.end() and match.start() < end for start, end in code):
            continue
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


def _open_code(text: str) -> int | None:
    """Where an inline code span that may still close starts, near the end of a streamed text."""
    start = max(0, len(text) - _CODE_WINDOW)
    paragraph = list(_BLANK_LINE.finditer(text, start))
    start = paragraph[-1].end() if paragraph else start
    closed = _inline_spans(text, start, len(text))
    at = closed[-1][1] if closed else start
    run = _TICKS.search(text, at)
    return None if run is None else run.start()


def _safe_cut(text: str) -> int:
    """How much of a streamed answer can be rewritten now: not its trailing whitespace, not a marker it ends
    with (another may follow), not an opener that may still become a marker, nor an inline code span that
    may still close."""
    end = len(text.rstrip())
    if (code := _open_code(text[:end])) is not None:
        end = code
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
        self._done = ""  # the answer rewritten so far, as the model wrote it (to know what is code)
        self._base = 0  # where in it the code may still reach into what comes next

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
        offset = len(self._done)
        self._done += ready
        base = self._base
        spans = [(s + base, e + base) for s, e in code_spans(self._done[base:])]
        code = [(max(0, s - offset), e - offset) for s, e in spans if e > offset]
        text, _ = rewrite_markers(ready, self.ctx, self._done[offset - 1 : offset], code)
        # a blank line outside code is where the next scan may start: no code span crosses it
        for blank in reversed(list(_BLANK_LINE.finditer(self._done, base))):
            if not any(s < blank.end() and blank.start() < e for s, e in spans):
                self._base = blank.end()
                break
        return text
