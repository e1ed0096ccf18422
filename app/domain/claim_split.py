"""An answer split into claims: its sentences, read as Markdown.

Headings, fenced code, horizontal rules, table rules and table header rows are not claims; a list item or a
table row is one (a list item of several sentences gives one claim per sentence). A claim's span leaves out
the list bullet, the table pipes and the citation markers that end it, so `answer[start:end]` is its text.
Sentences that only introduce what follows (ending with ":") or hold no content are skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}(\s|$)")
_RULE = re.compile(r"^[ \t]{0,3}([-*_=])([ \t]*\1){2,}[ \t]*$")
_TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-{2,}:?[ \t]*(\|[ \t]*:?-{2,}:?[ \t]*)*\|?[ \t]*$")
_BULLET = re.compile(r"^[ \t]*(?:>[ \t]*)*(?:[-*+]|\d{1,3}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?")
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]*)+")
_TRAILING_MARKS = re.compile(r"(?:[ \t]*\[\d{1,4}\])+\s*$")
_SENTENCE_END = re.compile(r"[.!?]+[\"'”’)\]*_]*(?:[ \t]*\[\d{1,4}\])*(?=\s|$)")
_ABBREVIATIONS = {"dr", "mr", "mrs", "ms", "st", "vs", "etc", "e.g", "i.e", "no", "prof", "jr", "sr", "fig", "approx"}
_WORDISH = re.compile(r"[^\W_]", re.UNICODE)


@dataclass(frozen=True)
class ClaimSpan:
    start: int
    end: int


def _lines(text: str) -> list[tuple[int, str]]:
    out, pos = [], 0
    for line in text.split("\n"):
        out.append((pos, line))
        pos += len(line) + 1
    return out


def _blocks(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, is_table_row) of the parts that may hold claims: paragraphs, list items, table rows."""
    lines = _lines(text)
    blocks: list[tuple[int, int, bool]] = []
    fenced = False
    paragraph: list[int] = []  # [start, end] of the open paragraph or list item

    def close() -> None:
        if paragraph:
            blocks.append((paragraph[0], paragraph[1], False))
            paragraph.clear()

    for i, (pos, line) in enumerate(lines):
        if _FENCE.match(line):
            close()
            fenced = not fenced
            continue
        following = lines[i + 1][1] if i + 1 < len(lines) else ""
        if fenced or not line.strip() or _HEADING.match(line) or _RULE.match(line) or _TABLE_RULE.match(line):
            close()
            continue
        if line.lstrip().startswith("|") or (line.count("|") >= 2 and _TABLE_RULE.match(following)):
            close()
            if not _TABLE_RULE.match(following):  # a header row is not a claim
                blocks.append((pos, pos + len(line), True))
            continue
        if _RULE.match(following) and following.strip()[0] in "=-":  # a setext heading
            close()
            continue
        bullet = _BULLET.match(line) or _QUOTE.match(line)
        if bullet:
            close()
            paragraph.extend([pos + bullet.end(), pos + len(line)])
        elif paragraph:
            paragraph[1] = pos + len(line)
        else:
            paragraph.extend([pos + len(line) - len(line.lstrip()), pos + len(line)])
    close()
    return blocks


def _table_row(text: str, start: int, end: int) -> ClaimSpan | None:
    row = text[start:end]
    inner_start = start + len(row) - len(row.lstrip().lstrip("|"))
    inner_end = start + len(row.rstrip().rstrip("|").rstrip())
    return _trimmed(text, inner_start, inner_end)


def _trimmed(text: str, start: int, end: int) -> ClaimSpan | None:
    piece = text[start:end]
    marks = _TRAILING_MARKS.search(piece)
    if marks:
        end = start + marks.start()
        piece = text[start:end]
    lead = len(piece) - len(piece.lstrip())
    start, end = start + lead, start + len(piece.rstrip())
    body = text[start:end]
    if not _WORDISH.search(body) or body.rstrip("*_ ").endswith(":"):
        return None
    return ClaimSpan(start, end)


def ends_with_abbreviation(text: str, dot: int) -> bool:
    """Whether the full stop at `dot` ends an abbreviation or a title ("Dr.", "e.g.", an initial)."""
    word = re.search(r"([\w.]+)$", text[:dot])
    if word is None:
        return False
    token = word.group(1).lower()
    return token in _ABBREVIATIONS or (len(token) == 1 and token.isalpha())


def _sentences(text: str, start: int, end: int) -> list[ClaimSpan]:
    spans: list[ClaimSpan] = []
    begin = start
    for match in _SENTENCE_END.finditer(text, start, end):
        rest = text[match.end() : end].lstrip()
        if rest and (
            rest[0].islower()
            or rest[0] in "(["
            or (text[match.start()] == "." and ends_with_abbreviation(text, match.start()))
        ):
            continue
        claim = _trimmed(text, begin, match.end())
        if claim:
            spans.append(claim)
        begin = match.end()
    tail = _trimmed(text, begin, end) if begin < end else None
    if tail:
        spans.append(tail)
    return spans


def split_claims(text: str) -> list[ClaimSpan]:
    claims: list[ClaimSpan] = []
    for start, end, table_row in _blocks(text):
        if table_row:
            row = _table_row(text, start, end)
            claims += [row] if row else []
        else:
            claims += _sentences(text, start, end)
    return claims
