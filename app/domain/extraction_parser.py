"""Parse an extraction answer into normalised records. Never raises.

Real model output is messy; this module decides what each record found by `record_lines` (the line
format, whatever its delimiter) or by `extraction_json` (JSON answers) means:
- a record's shape comes from its tag: an entity line with a fifth field stays an entity when its type
  field is a configured type (the extra field is a weight, an echoed type or more description);
  LightRAG's rule (5 fields = relation) applies only otherwise;
- relations carry their fields in either order (keywords then description, or the legacy reverse), with
  or without keywords and a trailing weight;
- a configured type name is never accepted as a relation end unless the answer declared it an entity;
- unknown types become Other when the project's types are given;
- delimiters, HTML and markdown are stripped from names, descriptions and keywords; names lose
  surrounding quotes, emphasis and trailing punctuation;
- identical records within one answer are kept once.
Records that cannot be read are skipped and counted in `ChunkExtraction.malformed`; an answer without
any usable record (prose, an empty answer) is flagged `no_usable_records`. A name too long (characters, or
bytes of its key: app/domain/names.py) is cut and counted in `ChunkExtraction.truncated_names`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

from app.core.config import DEFAULT_ENTITY_TYPES
from app.domain.chat import strip_think
from app.domain.extraction_json import json_records, looks_like_json
from app.domain.names import entity_key, normalize_description, normalize_name_checked, normalize_type
from app.domain.record_lines import ENTITY, FIELDS, IGNORED, RELATION, balance, keyword, record_lines
from app.domain.records import ChunkExtraction, EntityRecord, RelationRecord
from app.prompts.extraction import TUPLE_DELIMITER as D

_R = TypeVar("_R", EntityRecord, RelationRecord)

OTHER_TYPE = "other"
# Bump when a change here, in record_lines or in extraction_json reads some answer differently: records
# stored with chunks by an older parser (app/domain/chunk_records.py) are then parsed again on rebuild.
PARSER_VERSION = 2
_NUMBER = re.compile(r"^[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?$")
_KEYWORD_SPLIT = re.compile(r"[,\uff0c\u3001;]")
_REASONING = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_OPEN_REASONING = re.compile(r"</?(think|thinking|reasoning)>", re.IGNORECASE)
_BLOCK_TAG = re.compile(r"</?(?:br|p|div|li|ul|ol|tr|td|th|h[1-6])\b[^<>]*>", re.IGNORECASE)
_INLINE_TAG = re.compile(r"</?[a-zA-Z][a-zA-Z0-9]*(?:\s[^<>]*)?/?>")
_MARKERS = re.compile(r"<\|?COMPLETE\|?>|<\|+>|" + re.escape(D), re.IGNORECASE)
_EMPHASIS = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?])")
_NAME_TRAIL = ",;:!?"
_CUT_SHORT = re.compile(r"^[A-Z][a-z]{2,4}\.$")  # one word of five letters at most: "Colo.", "Calif."
_WRAPPERS = ("**", "__", "*", "_", "[[", "]]")


def parse_extraction(
    text: str,
    chunk_id: str,
    file_path: str | None,
    name_max_length: int = 500,
    entity_types: Sequence[str] | None = None,
) -> ChunkExtraction:
    """The records of one answer. With `entity_types` (the project's), types outside them become Other."""
    result = ChunkExtraction(chunk_id=chunk_id)
    try:
        _parse_into(result, text or "", file_path, name_max_length, entity_types)
    except Exception:  # a parser bug must never fail a document; count the answer as unreadable
        result.malformed += 1
        result.entities, result.relations, result.recovered = [], [], 0
    result.no_usable_records = result.recovered == 0 and (result.malformed > 0 or not result.completed)
    return result


def _without_reasoning(text: str) -> str:
    """Closed reasoning blocks go; an unclosed tag goes alone (records written after it are kept)."""
    return _OPEN_REASONING.sub("\n", _REASONING.sub("\n", strip_think(text)))


class _Types:
    def __init__(self, configured: Sequence[str] | None) -> None:
        self.mapping = configured is not None
        names = list(configured) if configured is not None else list(DEFAULT_ENTITY_TYPES)
        self.known = {_type_form(t): normalize_type(t) for t in [*names, "Other"]}
        self.keys = {entity_key(t) for t in [*names, "Other"]}

    def match(self, raw: str) -> str | None:
        form = _type_form(raw)
        for candidate in (form, form.removesuffix("s"), form.replace("isation", "ization")):
            if candidate in self.known:
                return self.known[candidate]
        return None

    def of(self, raw: str) -> str:
        if not self.mapping:
            return normalize_type(raw)
        return self.match(raw) or OTHER_TYPE


def _type_form(text: str) -> str:
    return re.sub(r"[\s_\-*\"'`]", "", text).casefold()


def _parse_into(
    result: ChunkExtraction, text: str, file_path: str | None, name_max_length: int, configured: Sequence[str] | None
) -> None:
    text = _without_reasoning(text)
    types = _Types(configured)
    lines = record_lines(text)
    result.completed = lines.completed
    result.malformed = lines.orphans
    shaped: list[tuple[str, list[str]] | None] = []
    for group in lines.groups:
        kind = keyword(group[0])
        if kind == IGNORED:
            continue
        shaped.append(_shape(kind, group[1:], lines.legacy, types))
    if not shaped and looks_like_json(text):
        records, failures = json_records(text)
        shaped.extend(records)
        result.malformed += failures
    for raw in shaped:
        if raw is None or not _accept(result, raw, file_path, name_max_length, types):
            result.malformed += 1
        else:
            result.recovered += 1
    _drop_type_ends(result, types)
    _drop_identical(result)


def _is_number(text: str) -> bool:
    return bool(_NUMBER.match(text.strip()))


def _sentence(text: str) -> bool:
    text = text.strip()
    return text.endswith((".", "!", "?", "\u3002")) or len(text.split()) > 6


def _shape(kind: str | None, body: list[str], legacy: bool, types: _Types) -> tuple[str, list[str]] | None:
    dangling = bool(body) and not body[-1]
    while body and not body[-1]:  # a delimiter left dangling at the end of a record
        body = body[:-1]
    if kind not in FIELDS:
        return None
    if kind == ENTITY and len(body) > 3 and types.match(body[1]) is not None:
        extra = [f for f in body[3:] if not _is_number(f) and types.match(f) is None and f != body[2]]
        return ENTITY, [body[0], body[1], " ".join([body[2], *extra])]
    if kind == ENTITY and len(body) == 3:
        return ENTITY, body
    if kind == ENTITY and len(body) < 3:
        return None
    # a relation, or an entity line with extra fields whose type is no type (LightRAG's rule)
    weight = ""
    if len(body) >= 4 and _is_number(body[-1]):
        body, weight = body[:-1], body[-1]
    if len(body) < 3:
        return None
    if len(body) == 3:  # no keywords (unless the description was left empty: "a<|#|>b<|#|>kw<|#|>")
        if dangling:
            return None
        return RELATION, [body[0], body[1], "", body[2], weight]
    first, rest = body[2], D.join(body[3:])
    if len(body) == 4 and (legacy and not _sentence(rest) or _sentence(first) and not _sentence(rest)):
        first, rest = rest, first  # legacy order: description before keywords
    return RELATION, [body[0], body[1], first, rest, weight]


def _clean_text(raw: str) -> str:
    """A description without delimiters, completion markers, HTML tags or markdown emphasis."""
    text = _MARKERS.sub(" ", raw)
    text = _INLINE_TAG.sub("", _BLOCK_TAG.sub(" ", text))
    text = _EMPHASIS.sub(r"\2", text)
    return _SPACE_BEFORE_PUNCT.sub(r"\1", " ".join(normalize_description(text).split()))


def _clean_name(raw: str) -> str:
    text = _clean_text(raw)
    previous = None
    while text != previous:
        previous = text
        text = balance(text).rstrip(_NAME_TRAIL).strip()
        for wrapper in _WRAPPERS:
            closing = {"[[": "]]"}.get(wrapper, wrapper)
            if len(text) > 2 * len(wrapper) and text.startswith(wrapper) and text.endswith(closing):
                text = text[len(wrapper) : -len(closing)].strip()
        if text.endswith(".") and text.count(".") == 1 and len(text.split()[-1]) > 4 and not _CUT_SHORT.match(text):
            text = text[:-1]  # "Alpine Orchid." but not "Acme Inc.", "U.S." or a word cut short ("Calif.")
    return text


def _number(text: str) -> float | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) and value > 0 else None


def _keywords(raw: str) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for part in _KEYWORD_SPLIT.split(_clean_text(raw)):
        word = " ".join(balance(part).split())
        if word and word.casefold() not in seen:
            seen.add(word.casefold())
            out.append(word)
    return out


def _accept(
    result: ChunkExtraction, raw: tuple[str, list[str]], file_path: str | None, name_max_length: int, types: _Types
) -> bool:
    kind, fields = raw
    chunk_id = result.chunk_id
    if kind == ENTITY:
        name_raw, type_raw, description_raw = fields
        name = _name(result, name_raw, name_max_length)
        description = _clean_text(description_raw)
        if not name or not description:
            return False
        result.entities.append(
            EntityRecord(
                name=name,
                key=entity_key(name),
                entity_type=types.of(_clean_text(type_raw)),
                description=description,
                chunk_id=chunk_id,
                file_path=file_path,
            )
        )
        return True
    src_raw, tgt_raw, keywords_raw, description_raw, weight = fields
    src = _name(result, src_raw, name_max_length)
    tgt = _name(result, tgt_raw, name_max_length)
    description = _clean_text(description_raw)
    if not src or not tgt or not description:
        return False
    src_key, tgt_key = entity_key(src), entity_key(tgt)
    if src_key == tgt_key:
        return True  # a self-relation is well formed but carries no edge
    if src_key > tgt_key:
        src, tgt, src_key, tgt_key = tgt, src, tgt_key, src_key
    result.relations.append(
        RelationRecord(
            src_name=src,
            tgt_name=tgt,
            src_key=src_key,
            tgt_key=tgt_key,
            keywords=_keywords(keywords_raw),
            description=description,
            weight=(_number(weight) if weight else None) or 1.0,
            chunk_id=chunk_id,
            file_path=file_path,
        )
    )
    return True


def _name(result: ChunkExtraction, raw: str, max_length: int) -> str:
    name, cut = normalize_name_checked(_clean_name(raw), max_length)
    if cut and name:
        result.truncated_names += 1
    return name


def _drop_type_ends(result: ChunkExtraction, types: _Types) -> None:
    """A relation to a type name ("Artifact") is a misread entity line, unless the answer declared that entity."""
    declared = {e.key for e in result.entities}
    kept = [r for r in result.relations if not ({r.src_key, r.tgt_key} & types.keys - declared)]
    dropped = len(result.relations) - len(kept)
    result.relations = kept
    result.malformed += dropped
    result.recovered -= dropped


def _drop_identical(result: ChunkExtraction) -> None:
    """Keep one of identical records (a model repeating itself must not multiply weights and fragments)."""
    entities: dict[tuple, EntityRecord] = {}
    for entity in result.entities:
        entities.setdefault((entity.key, entity.entity_type, entity.description.casefold()), entity)
    relations: dict[tuple, RelationRecord] = {}
    for relation in result.relations:
        kept = relations.setdefault((relation.src_key, relation.tgt_key, relation.description.casefold()), relation)
        if kept is not relation:
            folded = {k.casefold() for k in kept.keywords}
            kept.keywords += [k for k in relation.keywords if k.casefold() not in folded]
            kept.weight = max(kept.weight, relation.weight)
    result.entities, result.relations = list(entities.values()), list(relations.values())


def merge_gleaning(first: ChunkExtraction, glean: ChunkExtraction) -> ChunkExtraction:
    """Official rule, per entity key and per relation pair: gleaning records are added when the key is
    new, and replace the first pass's records only when their description is longer."""
    entities = _merge_groups(first.entities, glean.entities, lambda r: r.key)
    relations = _merge_groups(first.relations, glean.relations, lambda r: (r.src_key, r.tgt_key))
    return ChunkExtraction(
        chunk_id=first.chunk_id,
        entities=entities,
        relations=relations,
        malformed=first.malformed + glean.malformed,
        recovered=first.recovered + glean.recovered,
        truncated_names=first.truncated_names + glean.truncated_names,
        completed=first.completed or glean.completed,
        no_usable_records=first.no_usable_records and glean.no_usable_records,
        retried=first.retried,
    )


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
