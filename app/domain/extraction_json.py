"""Extraction answers written as JSON instead of records (also fenced, wrapped in prose or cut off).

Models asked for records often answer with `{"entities": [...], "relationships": [...]}`, with an array
of objects, one object per line, or entities and relations in separate fenced blocks; each object has its
own field names (`name`/`entity_name`, `source`/`src_id`/`entity_1`, an `entities` pair, an end given as
an object …). Each object becomes the canonical field list of a record: `[name, type, description]` for
an entity, `[source, target, keywords, description, weight]` for a relation. A relation stated as a bare
triple (source, relation, target, no description) is described by that triple.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeGuard

import json_repair

_FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)(?:```|$)", re.DOTALL)
_JSON_START = re.compile(r"[\[{]\s*[\"'\[{]")
_NAME = ("entity_name", "name", "entity", "title", "label", "id")
_TYPE = ("entity_type", "type", "category", "kind", "class")
_DESCRIPTION = (
    "entity_description",
    "relationship_description",
    "relation_description",
    "description",
    "desc",
    "summary",
    "details",
)
_SOURCE = (
    "source_entity",
    "source",
    "src_id",
    "src",
    "source_name",
    "source_entity_name",
    "from",
    "from_entity",
    "head",
    "head_entity",
    "subject",
    "entity1",
    "entity_1",
    "entity_a",
)
_TARGET = (
    "target_entity",
    "target",
    "tgt_id",
    "tgt",
    "target_name",
    "target_entity_name",
    "to",
    "to_entity",
    "tail",
    "tail_entity",
    "object",
    "entity2",
    "entity_2",
    "entity_b",
)
_PAIR = ("entities", "nodes", "pair", "between")
_KEYWORDS = (
    "relationship_keywords",
    "relation_keywords",
    "keywords",
    "keyword",
    "relationship",
    "relation",
    "label",
    "type",
)
_LABEL = ("relationship", "relation", "predicate", "relation_type", "relationship_type")
_WEIGHT = ("relationship_strength", "strength", "weight", "score", "confidence")
_RECORD_TAGS = {
    "entity": "entity",
    "entities": "entity",
    "node": "entity",
    "relation": "relation",
    "relations": "relation",
    "relationship": "relation",
    "relationships": "relation",
    "edge": "relation",
    "edges": "relation",
}
_LIST_KEYS = {
    "entities": "entity",
    "nodes": "entity",
    "relations": "relation",
    "relationships": "relation",
    "edges": "relation",
    "records": None,
    "items": None,
}


def looks_like_json(text: str) -> bool:
    return bool(_JSON_START.search(text))


def json_records(text: str) -> tuple[list[tuple[str, list[str]]], int]:
    """The records of a JSON answer and the count of objects that are not usable records."""
    for source in ([m.group(1) for m in _FENCE.finditer(text)], [text]):  # every fenced block, else the text
        records: list[tuple[str, list[str]]] = []
        failures = 0
        for data in (value for block in source for value in _values(block)):
            for kind, item in _items(data, None):
                record = _record(kind, item)
                if record is None:
                    failures += 1
                else:
                    records.append(record)
        if records:
            return records, failures
    return [], failures


def _values(text: str) -> list[Any]:
    """The JSON values of a text, in order (one object per line too); the last one may be cut off (repaired)."""
    decoder = json.JSONDecoder()
    out: list[Any] = []
    position = 0
    while start := _JSON_START.search(text, position):
        try:
            value, position = decoder.raw_decode(text, start.start())
        except ValueError:
            value, position = _repaired(text[start.start() :]), len(text)
        if isinstance(value, dict | list) and value:
            out.append(value)
    return out


def _repaired(text: str) -> Any:
    try:
        return json_repair.loads(text)
    except Exception:  # json_repair gives up on some inputs with an exception of its own
        return None


def _items(data: Any, kind: str | None) -> list[tuple[str | None, Any]]:
    if isinstance(data, list) and data and all(isinstance(v, str | int | float) for v in data):
        return [(kind, data)]  # one record as a list of values
    if isinstance(data, list):
        return [pair for item in data for pair in _items(item, kind)]
    if not isinstance(data, dict):
        return []
    record = bool(_text(data, _DESCRIPTION))  # {"entities": ["A", "B"], "description": …} is a relation
    lists = [
        (key, _listed(value, record))
        for key, value in data.items()
        if str(key).lower() in _LIST_KEYS and _listed(value, record) is not None
    ]
    if lists:
        return [pair for key, value in lists for pair in _items(value, _LIST_KEYS[str(key).lower()] or kind)]
    return [(kind, data)]


def _scalars(value: Any) -> TypeGuard[list[str | int | float]]:
    return isinstance(value, list) and all(isinstance(v, str | int | float) for v in value)


def _listed(value: Any, record: bool) -> list | None:
    """A list of records (not a relation's pair of names); records keyed by name become objects with a name."""
    if isinstance(value, list) and value and _scalars(value):
        return None if record else [[v] for v in value]  # one record per value (a bare string is unreadable)
    if isinstance(value, list):
        return value
    if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
        return [{"name": name, **item} for name, item in value.items()]
    return None


def _text(item: dict, keys: tuple[str, ...], skip: set[str] | None = None) -> str:
    lowered = {str(k).lower(): v for k, v in item.items()}
    for key in keys:
        value = lowered.get(key)
        if value is None or (skip and isinstance(value, str) and value.lower() in skip):
            continue
        if isinstance(value, list):
            return ", ".join(str(v) for v in value if isinstance(v, str | int | float))
        if isinstance(value, dict):  # an end given as an object: {"name": "Alice", "type": "person"}
            return _text(value, _NAME)
        if isinstance(value, str | int | float):
            return str(value)
    return ""


def _record(kind: str | None, item: Any) -> tuple[str, list[str]] | None:
    if isinstance(item, list) and all(isinstance(v, str | int | float) for v in item):
        return _positional(kind, [str(v) for v in item])
    if not isinstance(item, dict):
        return None
    tag = _RECORD_TAGS.get(_text(item, ("record", "record_type", "type", "kind")).lower())
    pair = _pair(item)
    kind = tag or kind or ("relation" if pair else "entity")
    if kind == "relation":
        source, target = pair or ("", "")
        keywords, description = _text(item, _KEYWORDS, set(_RECORD_TAGS)), _text(item, _DESCRIPTION)
        label = _text(item, _LABEL, set(_RECORD_TAGS))
        if not description and label:  # a triple: the relation's label (or a sentence) is all it says
            sentence = label.rstrip().endswith(".") or len(label.split()) > 6
            description = label if sentence else f"{source} {label} {target}"
            keywords = keywords if keywords != label or not sentence else ""
        return kind, [source, target, keywords, description, _text(item, _WEIGHT)]
    return kind, [_text(item, _NAME), _text(item, _TYPE, set(_RECORD_TAGS)), _text(item, _DESCRIPTION)]


def _pair(item: dict) -> tuple[str, str] | None:
    """A relation's two ends: source/target fields, or a two-name list ("entities": ["A", "B"])."""
    source, target = _text(item, _SOURCE), _text(item, _TARGET)
    if source and target:
        return source, target
    lowered = {str(k).lower(): v for k, v in item.items()}
    for key in _PAIR:
        value = lowered.get(key)
        if _scalars(value) and len(value) == 2:
            return str(value[0]), str(value[1])
    return None


def _positional(kind: str | None, values: list[str]) -> tuple[str, list[str]] | None:
    if values and values[0].lower() in _RECORD_TAGS:
        kind, values = _RECORD_TAGS[values[0].lower()], values[1:]
    if kind == "relation" and len(values) == 3:  # source, target, description
        return "relation", [values[0], values[1], "", values[2], ""]
    if kind == "relation" or (kind is None and len(values) >= 4):
        return ("relation", [*values[:4], *values[4:5]]) if len(values) >= 4 else None
    return ("entity", values[:3]) if len(values) >= 3 else None
