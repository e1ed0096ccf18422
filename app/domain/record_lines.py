"""Find the records of an extraction answer written in the line format, whatever delimiter the model used.

- repairs corrupted delimiters (`<|##|>`, `<#>`, `<|#>`, `|#|`, `<｜#｜>`, `<|>` with or without spaces …),
  reads the legacy `("entity"<|>…)##` format of LightRAG ≤ 1.4.6 and a plain `|` used consistently
  (also as a markdown table);
- ignores markdown fences, list markers, headings and prose around the records, and stops a record at a
  line of prose that follows it ("Note: …");
- joins a record that a line break cut in two (a description continuing on the next line, a keyword
  alone on its line, a blank line after a dangling delimiter);
- splits several records glued on one line, using the field count of each record type;
- leaves a delimiter string quoted inside a description in that description instead of inventing records.
A line that starts with a record keyword and a separator but cannot be read is counted as an orphan.
The result is a list of field lists (the first field is the record keyword), never an exception.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from app.prompts.extraction import TUPLE_DELIMITER as D

ENTITY = "entity"
RELATION = "relation"
IGNORED = "ignored"
FIELDS = {ENTITY: 4, RELATION: 5}
_KEYWORDS = {
    "entity": ENTITY,
    "entities": ENTITY,
    "relation": RELATION,
    "relations": RELATION,
    "relationship": RELATION,
    "relationships": RELATION,
}
_IGNORED_KEYWORDS = {"content_keywords", "contentkeywords"}

_P = "[|\uff5c]"  # ASCII or full-width vertical bar
_CORE = r"\\?#{1,3}"
_DELIMITER_REPAIRS = [
    # both angle brackets present, pipes optional or doubled: <#>, <|#>, <#|>, <|##|>, <|\#|>, <<|#|>>, < |#| >
    re.compile(rf"[<\uff1c]{{1,2}}\s?{_P}{{0,2}}\s?{_CORE}\s?{_P}{{0,2}}\s?[>\uff1e]{{1,2}}"),
    # both pipes present, a bracket missing or a pipe doubled: |#|>, <|#|, <|#||>, |#|
    re.compile(rf"[<\uff1c]?{_P}{{1,2}}{_CORE}{_P}{{1,2}}[>\uff1e]?"),
    # only the opening half <|#  or only the closing half #|>
    re.compile(rf"[<\uff1c]{_P}{{1,2}}{_CORE}(?![|\uff5c>])"),
    re.compile(rf"(?<![<|\uff5c#\\]){_CORE}{_P}{{1,2}}[>\uff1e]"),
]
_BARE = re.compile(r"[<\uff1c][|\uff5c]{1,2}[>\uff1e]")  # <|> or <||>: the legacy delimiter, also without legacy
_LEGACY = re.compile(
    r"\(\s*[\"']?(?:entity|relationship|relation|content_keywords)[\"']?\s*" + re.escape(D), re.IGNORECASE
)
_LEGACY_GLUE = re.compile(
    r"\)\s*(?:##)?\s*(?=\(\s*[\"']?\s*(?:entity|relationship|relation|content_keywords)\b)", re.IGNORECASE
)
_COMPLETE = re.compile(
    r"(?:<\s*[|\uff5c]{0,2}|[|\uff5c]{1,2})\s*complete\s*[|\uff5c]{0,2}\s*>?|^\s*COMPLETE\s*$|"
    r"[{<]\|?completion_delimiter\|?[}>]",
    re.IGNORECASE | re.MULTILINE,
)
_FENCE_LINE = re.compile(r"^(`{3,}|~{3,})")
_HEADER_LINE = re.compile(
    r"^(#+(\s.*)?|\*\*[^*]+\*\*:?|(entities|entity|relations|relationships|relation|records|output)\s*:?|"
    r"[-=_*]{3,}|\|?(\s*:?-{3,}:?\s*\|)+\s*:?-*:?\s*)$",
    re.IGNORECASE,
)
_KEYWORD_WORDS = r"entity|entities|relation|relations|relationship|relationships|content_keywords"
# atomic groups: decoration is consumed once, so a long run of quotes or stars cannot backtrack quadratically
_LEAD = r"(?>[\s\-*\u2022>#(\[{\"'`]*)(?:\d{1,4}[.)]\s*)?(?>[\s(\[{\"'`*]*)"
_TRAIL = r"(?>[\s\"'`*)\]}]*)(?::\s*)?"
# A line starting a record: optional list marker / quote / bracket, the keyword, then the delimiter.
_RECORD_START = re.compile(rf"^{_LEAD}(?:{_KEYWORD_WORDS}){_TRAIL}" + re.escape(D), re.IGNORECASE)
# The same inside a line of prose ("Here they are: entity<|#|>…").
_RECORD_INSIDE = re.compile(rf"(?<![\w\"'])(?:{_KEYWORD_WORDS}){_TRAIL}" + re.escape(D), re.IGNORECASE)
# A line in the plain-pipe format, or a markdown table row of records: "entity | name | type | text".
_PIPE_RECORD = re.compile(rf"^\s*\|?{_LEAD}(?:{_KEYWORD_WORDS}){_TRAIL}\|", re.IGNORECASE)
# A record line with another separator: a tab, a bracketed token (<SEP>, {tuple_delimiter}, <|$|>) or a
# short run of symbols (||, ~, ::, ;), spaces around it allowed.
_SEPARATED = re.compile(
    rf"^{_LEAD}(?:entity|relationship|relation)[\"'`*]*"
    r"(\t|[ ]*(?:[<{\[\uff1c][^\s<>{}\[\]\uff1c\uff1e]{1,24}[>}\]\uff1e]|[^\w\s\"'`()\[\]{}<>]{1,4})[ ]*)(?=\S)",
    re.IGNORECASE,
)
# "relation: A -> B (owner)", "Entity 2 - Alice": a record the model wrote in a shape of its own
_LABELLED_RECORD = re.compile(
    rf"^{_LEAD}(?:entity|relation|relationship)\s*(?:\d+\s*)?[:#\-\u2013\u2014>)\]]\s*\S", re.IGNORECASE
)
_COMMON_PUNCTUATION = {",", ".", "-", ":", "*", "'", "|"}
# A record keyword alone on its line, its fields on the next line starting with the delimiter.
_LONE_KEYWORD = re.compile(
    rf"^([ \t]*(?:{_KEYWORD_WORDS})[ \t]*)\n[ \t]*(?={re.escape(D)})", re.IGNORECASE | re.MULTILINE
)
_KEYWORD_FIELD = re.compile(rf"^{_LEAD}([a-z_]+){_TRAIL}$", re.IGNORECASE)
# A description ending with a glued keyword: "… last description. relation" (not inside quotes).
_GLUED_TAIL = re.compile(r"^(.*?[^\"'`\w])\s*(entity|relation|relationship)$", re.IGNORECASE | re.DOTALL)
# A line of commentary after the records: it ends the record before it instead of continuing its text.
_PROSE_AFTER = re.compile(
    r"^(note|notes|explanation|summary|in summary|overall|i |i'|i’|let me|hope|please|these |this list|"
    r"here |feel free|if you|the above|all (the )?(entities|relations|records))",
    re.IGNORECASE,
)
# A field that opens a quotation it does not close ("… wrote \"") — the delimiter after it is quoted text.
_OPEN_QUOTE = re.compile(r"\s([\"'\u201c\u2018])[^\"'\u201c\u201d\u2018\u2019]*$")
_CLOSER = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019"}
# "name: Alice", "Type: Person", "description: …": small models label the fields they write
_FIELD_LABEL = re.compile(
    r"^(?:entity[ _]?name|entity[ _]?type|entity[ _]?description|name|type|description|desc|source(?:[ _]entity)?|"
    r"target(?:[ _]entity)?|src(?:[ _]id)?|tgt(?:[ _]id)?|(?:relationship[ _])?keywords|relationship[ _]description|"
    r"weight|strength)\s*:\s*",
    re.IGNORECASE,
)
_QUOTES = "\"'`\u201c\u201d\u2018\u2019"
_OPENERS, _CLOSERS = "([{", ")]}"


@dataclass
class RecordLines:
    groups: list[list[str]] = field(default_factory=list)  # one field list per record, keyword first
    orphans: int = 0  # delimiter-bearing lines that belong to no record
    legacy: bool = False  # the `("entity"<|>…)##` format: relation fields in the legacy order
    completed: bool = False  # a completion marker was written


def keyword(text: str) -> str | None:
    """ "entity" / "relation" when a field is only a record keyword (any case, light decoration)."""
    match = _KEYWORD_FIELD.match(text)
    if not match:
        return None
    word = match.group(1).lower()
    return IGNORED if word in _IGNORED_KEYWORDS else _KEYWORDS.get(word)


def record_lines(text: str) -> RecordLines:
    """The records of an answer in the line format (think blocks already removed)."""
    out = RecordLines(completed=bool(_COMPLETE.search(text)))
    text = _repair_delimiters(text)
    out.legacy = bool(_LEGACY.search(text))
    if out.legacy:
        text = _LEGACY_GLUE.sub(")\n", text)
        text = re.sub(r"##\s*(?=\(|$)", "\n", text, flags=re.MULTILINE)
    records, out.orphans = _logical_records(_LONE_KEYWORD.sub(r"\1", text))
    for record in records:
        fields = [balance(f) for f in _rejoin_quoted(record.split(D))]
        out.groups.extend(_split_glued(fields[:1] + [_FIELD_LABEL.sub("", f, count=1) for f in fields[1:]]))
    return out


def balance(text: str) -> str:
    """Drop wrapping quotes, markdown bold, stray pipes and unbalanced brackets around a field."""
    previous = None
    while text != previous:
        previous = text
        text = text.strip().strip("|\uff5c").strip()
        if len(text) >= 4 and text.startswith("**") and text.endswith("**"):
            text = text[2:-2]
        if len(text) >= 2 and text[0] in _QUOTES and text[-1] == text[0] and text[0] not in text[1:-1]:
            text = text[1:-1]
            continue
        for quote in '"`':
            if text.count(quote) % 2 == 1:
                if text.startswith(quote):
                    text = text[1:]
                elif text.endswith(quote):
                    text = text[:-1]
        for opener, closer in zip(_OPENERS, _CLOSERS, strict=True):
            if text.endswith(closer) and text.count(closer) > text.count(opener):
                text = text[:-1]
            if text.startswith(opener) and text.count(opener) > text.count(closer):
                text = text[1:]
    return text


def _repair_delimiters(text: str) -> str:
    for rx in _DELIMITER_REPAIRS:
        text = rx.sub(D, text)
    text = _other_separators(_BARE.sub(D, text))
    if D not in text:
        text = "\n".join(_pipe_line(line) for line in text.splitlines())
    return text


def _separator(line: str) -> str | None:
    """The separator after the record keyword of a line ("entity<SEP>Alice<SEP>…"), stripped of spaces."""
    match = _SEPARATED.match(line)
    return (match.group(1).strip() or "\t") if match else None


def _other_separators(text: str) -> str:
    """A record line using another separator at least three times (entity~A~Person~…) gets the delimiter."""
    return "\n".join(_resplit(line) for line in text.splitlines())


def _resplit(line: str) -> str:
    sep = _separator(line)
    if sep is None or sep == D or sep in _COMMON_PUNCTUATION or line.count(sep) < 3:
        return line
    return re.sub(rf"[ \t]*{re.escape(sep)}[ \t]*", D, line)


def _pipe_line(line: str) -> str:
    """A record written with plain `|` (or as a markdown table row) in the delimiter format."""
    if not _PIPE_RECORD.match(line):
        return line
    cells = line.strip()
    if cells.startswith("|"):
        cells = cells[1:]
    if cells.endswith("|"):
        cells = cells[:-1]
    return D.join(cell.strip() for cell in cells.split("|"))


def _logical_records(text: str) -> tuple[list[str], int]:
    """Record texts, plus the count of delimiter-bearing lines that belong to no record.

    A record runs until the next record start, a blank line, a heading, a fence, a completion marker
    or a line of commentary; its continuation lines (a description cut by a line break) are joined with
    a space."""
    records: list[str] = []
    orphans = 0
    open_record = False
    dangling = False  # the open record ends with a delimiter: its text may follow a blank line
    for raw_line in _COMPLETE.sub("\n\n", text).splitlines():
        line = raw_line.strip()
        if open_record and not line:
            dangling = open_record = records[-1].rstrip().endswith(D)
            continue
        if dangling:
            dangling = open_record = False
            if D not in line and not (_PROSE_AFTER.match(line) or _HEADER_LINE.match(line) or _FENCE_LINE.match(line)):
                records[-1] = f"{records[-1]} {line}"
                continue
        if not line or _FENCE_LINE.match(line) or _HEADER_LINE.match(line):
            open_record = False
        elif _RECORD_START.match(line):
            records.append(line)
            open_record = True
        elif D not in line and _unread(line):  # a record in a shape of its own, not a continuation
            orphans += 1
            open_record = False
        elif (
            open_record
            and D not in line
            and _complete(records[-1])
            and _PROSE_AFTER.match(line)
            and records[-1].rstrip().endswith((".", "!", "?"))
        ):
            open_record = False
        elif open_record and (D not in line or line.startswith(D) or not _complete(records[-1])):
            records[-1] = f"{records[-1]} {line}"
        elif inside := _RECORD_INSIDE.search(line):
            records.append(line[inside.start() :])
            open_record = True
        elif D in line or _unread(line):  # fields without a record keyword, after a complete record, or unread
            orphans += 1
            open_record = False
    return records, orphans


def _unread(line: str) -> bool:
    """A line that looks like a record with a separator that could not be read (never dropped silently)."""
    sep = _separator(line)
    return (
        bool(_LABELLED_RECORD.match(line))
        or sep is not None
        and sep not in _COMMON_PUNCTUATION
        and line.count(sep) >= 3
    )


def _complete(record: str) -> bool:
    """Whether a record text already has all the fields its keyword asks for."""
    fields = record.split(D)
    return len(fields) >= FIELDS.get(keyword(fields[0]) or "", 99)


def _rejoin_quoted(fields: list[str]) -> list[str]:
    """Glue back fields that a delimiter quoted inside a description split apart."""
    fields = [f.strip() for f in fields]
    out: list[str] = []
    index = 0
    while index < len(fields):
        text = fields[index]
        index += 1
        opened = _OPEN_QUOTE.search(text)
        if opened:
            closer = _CLOSER[opened.group(1)]
            end = next(
                (j for j in range(index, len(fields)) if keyword(fields[j]) is None and closer in fields[j]), None
            )
            if end is not None and all(keyword(f) is None for f in fields[index:end]):
                text = D.join(fields[index - 1 : end + 1])
                index = end + 1
        out.append(text)
    return out


def _split_glued(fields: list[str]) -> list[list[str]]:
    """Cut one record's field list into several records, using each record type's field count.

    A new record starts at a field that is just a keyword (records glued by the delimiter), or inside
    the last field of a complete record when that field ends with a keyword and more fields follow
    (glued by a space or punctuation). Everything else stays with the current record, so a description
    quoting the delimiter is not turned into invented records.
    """
    groups: list[list[str]] = []
    current: list[str] = []
    for index, text in enumerate(fields):
        if current and len(current) >= 4 and keyword(text):
            groups.append(current)
            current = []
        kind = keyword(current[0]) if current else None
        has_more = index + 1 < len(fields) and not keyword(fields[index + 1])
        if kind in FIELDS and len(current) + 1 == FIELDS[kind] and has_more:
            match = _GLUED_TAIL.match(text)
            if match:
                groups.append([*current, match.group(1).strip()])
                current = [match.group(2)]
                continue
        current.append(text)
    if current:
        groups.append(current)
    return groups
