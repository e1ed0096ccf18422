"""Parse an extraction answer (official `<|#|>` record format) into normalised records. Never raises.

Real model output is messy. This parser
- repairs corrupted delimiters (`<|##|>`, `<#>`, `<|#>`, `<｜#｜>`, bare `<|>` …) and reads the legacy
  `("entity"<|>…)##` format of LightRAG ≤ 1.4.6;
- ignores markdown fences, list markers, headings and prose around the records;
- joins a record that a line break cut in two (a description continuing on the next line);
- splits several records glued on one line, using the field count of each record type (the official
  parser keeps only the first of them);
- leaves a delimiter string quoted inside a description in that description instead of inventing records.
Records that cannot be read are skipped and counted in `ChunkExtraction.malformed`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TypeVar

from app.domain.chat import strip_think
from app.domain.names import entity_key, normalize_description, normalize_name, normalize_type
from app.domain.records import ChunkExtraction, EntityRecord, RelationRecord
from app.prompts.extraction import TUPLE_DELIMITER as D

_R = TypeVar("_R", EntityRecord, RelationRecord)

_ENTITY = "entity"
_RELATION = "relation"
_KEYWORDS = {"entity": _ENTITY, "entities": _ENTITY, "relation": _RELATION, "relations": _RELATION,
             "relationship": _RELATION, "relationships": _RELATION}
_IGNORED_KEYWORDS = {"content_keywords", "contentkeywords"}
_FIELDS = {_ENTITY: 4, _RELATION: 5}

_P = "[|\uff5c]"  # ASCII or full-width vertical bar
_CORE = r"\\?#{1,3}"
_DELIMITER_REPAIRS = [
    # both angle brackets present, pipes optional or doubled: <#>, <|#>, <#|>, <|##|>, <|\#|>, <<|#|>>, < |#| >
    re.compile(rf"[<\uff1c]{{1,2}}\s?{_P}{{0,2}}\s?{_CORE}\s?{_P}{{0,2}}\s?[>\uff1e]{{1,2}}"),
    # both pipes present, a bracket missing or a pipe doubled: |#|>, <|#|, <|#||>
    re.compile(rf"[<\uff1c]?{_P}{{1,2}}{_CORE}{_P}{{1,2}}[>\uff1e]?"),
    # only the opening half <|#  or only the closing half #|>
    re.compile(rf"[<\uff1c]{_P}{{1,2}}{_CORE}(?![|\uff5c>])"),
    re.compile(rf"(?<![<|\uff5c#\\]){_CORE}{_P}{{1,2}}[>\uff1e]"),
]
_BARE_GLUED = re.compile(r"(?<=\S)<\|{1,2}>(?=\S)")   # <|> or <||> between two fields, no spaces
_LEGACY = re.compile(r"(?:entity|relationship|relation|content_keywords)[\"']?\s*<\|>", re.IGNORECASE)
_LEGACY_GLUE = re.compile(
    r"\)\s*(?:##)?\s*(?=\(\s*[\"']?\s*(?:entity|relationship|relation|content_keywords)\b)", re.IGNORECASE)
_COMPLETE = re.compile(
    r"(?:<\s*[|\uff5c]{0,2}|[|\uff5c]{1,2})\s*complete\s*[|\uff5c]{0,2}\s*>?|^\s*COMPLETE\s*$",
    re.IGNORECASE | re.MULTILINE)
_FENCE_LINE = re.compile(r"^(`{3,}|~{3,})")
_HEADER_LINE = re.compile(
    r"^(#+(\s.*)?|\*\*[^*]+\*\*:?|(entities|entity|relations|relationships|relation|records|output)\s*:?|"
    r"[-=_*]{3,})$", re.IGNORECASE)
_KEYWORD_WORDS = r"entity|entities|relation|relations|relationship|relationships|content_keywords"
# atomic groups: decoration is consumed once, so a long run of quotes or stars cannot backtrack quadratically
_LEAD = r"(?>[\s\-*\u2022>#(\[{\"'`]*)(?:\d{1,4}[.)]\s*)?(?>[\s(\[{\"'`*]*)"
_TRAIL = r"(?>[\s\"'`*)\]}]*)"
# A line starting a record: optional list marker / quote / bracket, the keyword, then the delimiter.
_RECORD_START = re.compile(rf"^{_LEAD}(?:{_KEYWORD_WORDS}){_TRAIL}" + re.escape(D), re.IGNORECASE)
# The same inside a line of prose ("Here they are: entity<|#|>…").
_RECORD_INSIDE = re.compile(rf"(?<![\w\"'])(?:{_KEYWORD_WORDS}){_TRAIL}" + re.escape(D), re.IGNORECASE)
_KEYWORD_FIELD = re.compile(rf"^{_LEAD}([a-z_]+){_TRAIL}$", re.IGNORECASE)
# A description ending with a glued keyword: "… last description. relation" (not inside quotes).
_GLUED_TAIL = re.compile(r"^(.*?[^\"'`\w])\s*(entity|relation|relationship)$", re.IGNORECASE | re.DOTALL)
_NUMBER = re.compile(r"^[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?$")
# A field that opens a quotation it does not close ("… wrote \"") — the delimiter after it is quoted text.
_OPEN_QUOTE = re.compile(r"\s([\"'\u201c\u2018])[^\"'\u201c\u201d\u2018\u2019]*$")
_CLOSER = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019"}
_KEYWORD_SPLIT = re.compile(r"[,\uff0c\u3001;]")
_QUOTES = "\"'`\u201c\u201d\u2018\u2019"
_OPENERS, _CLOSERS = "([{", ")]}"


@dataclass
class _Raw:
    kind: str
    fields: list[str]


def _repair_delimiters(text: str, legacy: bool) -> str:
    if legacy:
        text = _LEGACY_GLUE.sub(")\n", text)
        text = text.replace("<|>", D)
        text = re.sub(r"##\s*(?=\(|$)", "\n", text, flags=re.MULTILINE)
    for rx in _DELIMITER_REPAIRS:
        text = rx.sub(D, text)
    return _BARE_GLUED.sub(D, text)


def _balance(text: str) -> str:
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
        for quote in "\"`":
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


def _keyword(field: str) -> str | None:
    """"entity" / "relation" when a field is only a record keyword (any case, light decoration)."""
    match = _KEYWORD_FIELD.match(field)
    if not match:
        return None
    word = match.group(1).lower()
    return "ignored" if word in _IGNORED_KEYWORDS else _KEYWORDS.get(word)


def _logical_records(text: str) -> tuple[list[str], int]:
    """Record texts, plus the count of delimiter-bearing lines that belong to no record.

    A record runs until the next record start, a blank line, a heading, a fence or a completion
    marker; its continuation lines (a description cut by a line break) are joined with a space."""
    records: list[str] = []
    orphans = 0
    open_record = False
    for raw_line in _COMPLETE.sub("\n\n", text).splitlines():
        line = raw_line.strip()
        if not line or _FENCE_LINE.match(line) or _HEADER_LINE.match(line):
            open_record = False
        elif _RECORD_START.match(line):
            records.append(line)
            open_record = True
        elif open_record and (D not in line or line.startswith(D) or not _complete(records[-1])):
            records[-1] = f"{records[-1]} {line}"
        elif inside := _RECORD_INSIDE.search(line):
            records.append(line[inside.start():])
            open_record = True
        elif D in line:  # fields without a record keyword, or after a complete record
            orphans += 1
            open_record = False
    return records, orphans


def _complete(record: str) -> bool:
    """Whether a record text already has all the fields its keyword asks for."""
    fields = record.split(D)
    return len(fields) >= _FIELDS.get(_keyword(fields[0]) or "", 99)


def _rejoin_quoted(fields: list[str]) -> list[str]:
    """Glue back fields that a delimiter quoted inside a description split apart."""
    fields = [f.strip() for f in fields]
    out: list[str] = []
    index = 0
    while index < len(fields):
        field = fields[index]
        index += 1
        opened = _OPEN_QUOTE.search(field)
        if opened:
            closer = _CLOSER[opened.group(1)]
            end = next((j for j in range(index, len(fields)) if _keyword(fields[j]) is None and closer in fields[j]),
                       None)
            if end is not None and all(_keyword(f) is None for f in fields[index:end]):
                field = D.join(fields[index - 1:end + 1])
                index = end + 1
        out.append(field)
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
    for index, field in enumerate(fields):
        if current and len(current) >= 4 and _keyword(field):
            groups.append(current)
            current = []
        kind = _keyword(current[0]) if current else None
        has_more = index + 1 < len(fields) and not _keyword(fields[index + 1])
        if kind in _FIELDS and len(current) + 1 == _FIELDS[kind] and has_more:
            match = _GLUED_TAIL.match(field)
            if match:
                groups.append([*current, match.group(1).strip()])
                current = [match.group(2)]
                continue
        current.append(field)
    if current:
        groups.append(current)
    return groups


def _shape(fields: list[str], legacy: bool) -> _Raw | None:
    while len(fields) > 1 and not fields[-1]:  # a delimiter left dangling at the end of a record
        fields = fields[:-1]
    kind = _keyword(fields[0])
    if kind not in _FIELDS:
        return None
    body = fields[1:]
    if kind == _RELATION and len(body) == 5 and _NUMBER.match(body[4]):
        # a strength as sixth field: legacy order (description, keywords) or the current order plus weight
        src, tgt, a, b, weight = body
        keywords, description = (b, a) if legacy else (a, b)
        return _Raw(_RELATION, [src, tgt, keywords, description, weight])
    if kind == _RELATION and legacy and len(body) == 4:
        src, tgt, description, keywords = body
        return _Raw(_RELATION, [src, tgt, keywords, description])
    if kind == _ENTITY and len(body) == 4:
        kind = _RELATION  # official rule: a 5-field record labelled "entity" is a relation
    need = _FIELDS[kind] - 1
    if len(body) < need:
        return None
    if len(body) > need:  # a delimiter inside the description: give the description its text back
        body = [*body[:need - 1], D.join(body[need - 1:])]
    return _Raw(kind, body)


def _number(text: str) -> float | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) and value > 0 else None


def _keywords(raw: str) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for part in _KEYWORD_SPLIT.split(raw):
        word = " ".join(_balance(normalize_description(part)).split())
        if word and word.casefold() not in seen:
            seen.add(word.casefold())
            out.append(word)
    return out


def parse_extraction(
    text: str, chunk_id: str, file_path: str | None, name_max_length: int = 500
) -> ChunkExtraction:
    result = ChunkExtraction(chunk_id=chunk_id)
    try:
        _parse_into(result, text or "", file_path, name_max_length)
    except Exception:  # a parser bug must never fail a document; count the answer as unreadable
        result.malformed += 1
    return result


def _parse_into(result: ChunkExtraction, text: str, file_path: str | None, name_max_length: int) -> None:
    text = strip_think(text)
    legacy = bool(_LEGACY.search(text))
    records, result.malformed = _logical_records(_repair_delimiters(text, legacy))
    for record in records:
        fields = [_balance(f) for f in _rejoin_quoted(record.split(D))]
        for group in _split_glued(fields):
            if _keyword(group[0]) == "ignored":
                continue
            raw = _shape(group, legacy)
            if raw is None or not _accept(result, raw, file_path, name_max_length):
                result.malformed += 1


def _accept(result: ChunkExtraction, raw: _Raw, file_path: str | None, name_max_length: int) -> bool:
    chunk_id = result.chunk_id
    if raw.kind == _ENTITY:
        name_raw, type_raw, description_raw = raw.fields
        name = normalize_name(name_raw, name_max_length)
        description = normalize_description(description_raw)
        if not name or not description:
            return False
        result.entities.append(EntityRecord(
            name=name, key=entity_key(name), entity_type=normalize_type(type_raw), description=description,
            chunk_id=chunk_id, file_path=file_path,
        ))
        return True
    src_raw, tgt_raw, keywords_raw, description_raw, *weight = raw.fields
    src, tgt = normalize_name(src_raw, name_max_length), normalize_name(tgt_raw, name_max_length)
    description = normalize_description(description_raw)
    if not src or not tgt or not description:
        return False
    src_key, tgt_key = entity_key(src), entity_key(tgt)
    if src_key == tgt_key:
        return True  # a self-relation is well formed but carries no edge
    if src_key > tgt_key:
        src, tgt, src_key, tgt_key = tgt, src, tgt_key, src_key
    result.relations.append(RelationRecord(
        src_name=src, tgt_name=tgt, src_key=src_key, tgt_key=tgt_key, keywords=_keywords(keywords_raw),
        description=description, weight=(_number(weight[0]) if weight else None) or 1.0,
        chunk_id=chunk_id, file_path=file_path,
    ))
    return True


def merge_gleaning(first: ChunkExtraction, glean: ChunkExtraction) -> ChunkExtraction:
    """Official rule, per entity key and per relation pair: gleaning records are added when the key is
    new, and replace the first pass's records only when their description is longer."""
    entities = _merge_groups(first.entities, glean.entities, lambda r: r.key)
    relations = _merge_groups(first.relations, glean.relations, lambda r: (r.src_key, r.tgt_key))
    return ChunkExtraction(chunk_id=first.chunk_id, entities=entities, relations=relations,
                           malformed=first.malformed + glean.malformed)


def _merge_groups(first: list[_R], glean: list[_R], key_of: Callable[[_R], Hashable]) -> list[_R]:
    groups: dict[Hashable, list[_R]] = {}
    for record in first:
        groups.setdefault(key_of(record), []).append(record)
    extra: dict[Hashable, list[_R]] = {}
    for record in glean:
        extra.setdefault(key_of(record), []).append(record)
    for key, records in extra.items():
        current = groups.get(key)
        if current is None or len(records[0].description) > len(current[0].description):
            groups[key] = records
    return [record for records in groups.values() for record in records]
