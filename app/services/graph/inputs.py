"""Curation input normalisation: display names, descriptions and keywords as stored, entity keys and
sorted relation pairs, with clear 4xx errors for names that normalise to nothing."""

from __future__ import annotations

import re

from app.core.errors import InvalidInput
from app.domain.names import lookup_key, normalize_description, normalize_name, sanitize, sorted_pair
from app.schemas.graph import Keywords

_KEYWORD_SPLIT = re.compile(r"[,\uff0c]")


def display_name(raw: str, max_length: int) -> str:
    name = normalize_name(raw, max_length)
    if not name:
        raise InvalidInput(f"'{raw}' is not a usable entity name", code="invalid_entity_name")
    return name


def clean_description(raw: str) -> str:
    text = normalize_description(raw)
    if not text:
        raise InvalidInput("description must not be empty", code="invalid_description")
    return text


def keyword_list(value: Keywords | str) -> list[str]:
    values = [value] if isinstance(value, str) else value
    parts = [p for v in values for p in _KEYWORD_SPLIT.split(sanitize(v))]
    return [p.strip() for p in parts if p.strip()]


def join_keywords(*values: Keywords | str) -> str:
    """Sorted, de-duplicated union joined by "," (the ingestion format)."""
    return ",".join(sorted({k for v in values for k in keyword_list(v)}))


def ordered_union(*lists: list[str] | None) -> list[str]:
    seen: dict[str, None] = {}
    for items in lists:
        for item in items or []:
            seen.setdefault(item, None)
    return list(seen)


def name_key(name: str, max_length: int) -> str:
    """The entity key a user-supplied name refers to (the extraction normalisation, then case folding)."""
    key = lookup_key(sanitize(name), max_length)
    if not key:
        raise InvalidInput(f"'{name}' is not a usable entity name", code="invalid_entity_name")
    return key


def pair_key(source: str, target: str, max_length: int) -> tuple[str, str]:
    a, b = name_key(source, max_length), name_key(target, max_length)
    if a == b:
        raise InvalidInput("A relation needs two different entities", code="self_relation")
    return sorted_pair(a, b)
