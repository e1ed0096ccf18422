"""Extraction answers written as JSON instead of records (also fenced, wrapped in prose or cut off).

Models asked for records often answer with `{"entities": [...], "relationships": [...]}` or with an array
of objects, each with its own field names (`name`/`entity_name`, `source`/`src_id`/`source_entity` …).
Each object becomes the canonical field list of a record: `[name, type, description]` for an entity,
`[source, target, keywords, description, weight]` for a relation.
"""

from __future__ import annotations

import re
from typing import Any

import json_repair

_FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)(?:```|$)", re.DOTALL)
_JSON_START = re.compile(r"[\[{]\s*[\"'\[{]")
_NAME = ("entity_name", "name", "entity", "title", "label", "id")
_TYPE = ("entity_type", "type", "category", "kind", "class")
_DESCRIPTION = ("entity_description", "relationship_description", "relation_description", "description",
                "desc", "summary", "details")
_SOURCE = ("source_entity", "source", "src_id", "src", "source_name", "from", "head", "subject", "entity1")
_TARGET = ("target_entity", "target", "tgt_id", "tgt", "target_name", "to", "tail", "object", "entity2")
_KEYWORDS = ("relationship_keywords", "relation_keywords", "keywords", "keyword", "relationship", "relation",
             "label", "type")
_WEIGHT = ("relationship_strength", "strength", "weight", "score", "confidence")
_RECORD_TAGS = {"entity": "entity", "entities": "entity", "node": "entity", "relation": "relation",
                "relations": "relation", "relationship": "relation", "relationships": "relation",
                "edge": "relation", "edges": "relation"}
_LIST_KEYS = {"entities": "entity", "nodes": "entity", "relations": "relation", "relationships": "relation",
              "edges": "relation", "records": None, "items": None}


def looks_like_json(text: str) -> bool:
    return bool(_JSON_START.search(text))


def json_records(text: str) -> tuple[list[tuple[str, list[str]]], int]:
    """The records of a JSON answer and the count of objects that are not usable records."""
    records: list[tuple[str, list[str]]] = []
    failures = 0
    for data in _documents(text):
        for kind, item in _items(data, None):
            record = _record(kind, item)
            if record is None:
                failures += 1
            else:
                records.append(record)
        if records:
            break
    return records, failures


def _documents(text: str) -> list[Any]:
    """Candidate JSON values: fenced blocks first, then the text from its first bracket (repaired)."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)]
    start = _JSON_START.search(text)
    if start:
        candidates.append(text[start.start():])
    out = []
    for candidate in candidates:
        try:
            value = json_repair.loads(candidate)
        except Exception:  # json_repair gives up on some inputs with an exception of its own
            continue
        if isinstance(value, dict | list) and value:
            out.append(value)
    return out


def _items(data: Any, kind: str | None) -> list[tuple[str | None, Any]]:
    if isinstance(data, list) and data and all(isinstance(v, str | int | float) for v in data):
        return [(kind, data)]  # one record as a list of values
    if isinstance(data, list):
        return [pair for item in data for pair in _items(item, kind)]
    if not isinstance(data, dict):
        return []
    lists = [(key, value) for key, value in data.items() if str(key).lower() in _LIST_KEYS
             and isinstance(value, list)]
    if lists:
        return [pair for key, value in lists for pair in _items(value, _LIST_KEYS[str(key).lower()] or kind)]
    return [(kind, data)]


def _text(item: dict, keys: tuple[str, ...], skip: set[str] | None = None) -> str:
    lowered = {str(k).lower(): v for k, v in item.items()}
    for key in keys:
        value = lowered.get(key)
        if value is None or (skip and isinstance(value, str) and value.lower() in skip):
            continue
        if isinstance(value, list):
            return ", ".join(str(v) for v in value if isinstance(v, str | int | float))
        if isinstance(value, str | int | float):
            return str(value)
    return ""


def _record(kind: str | None, item: Any) -> tuple[str, list[str]] | None:
    if isinstance(item, list) and all(isinstance(v, str | int | float) for v in item):
        return _positional(kind, [str(v) for v in item])
    if not isinstance(item, dict):
        return None
    tag = _RECORD_TAGS.get(_text(item, ("record", "record_type", "type", "kind")).lower())
    kind = tag or kind or ("relation" if _text(item, _SOURCE) and _text(item, _TARGET) else "entity")
    if kind == "relation":
        return kind, [_text(item, _SOURCE), _text(item, _TARGET), _text(item, _KEYWORDS, set(_RECORD_TAGS)),
                      _text(item, _DESCRIPTION), _text(item, _WEIGHT)]
    return kind, [_text(item, _NAME), _text(item, _TYPE, set(_RECORD_TAGS)), _text(item, _DESCRIPTION)]


def _positional(kind: str | None, values: list[str]) -> tuple[str, list[str]] | None:
    if values and values[0].lower() in _RECORD_TAGS:
        kind, values = _RECORD_TAGS[values[0].lower()], values[1:]
    if kind == "relation" or (kind is None and len(values) >= 4):
        return ("relation", [*values[:4], *values[4:5]]) if len(values) >= 4 else None
    return ("entity", values[:3]) if len(values) >= 3 else None
