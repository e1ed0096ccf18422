"""The parsed extraction records of a chunk, stored with it (chunks.extraction_records) when its extraction
is saved, so a deletion rebuild reads them back instead of parsing the cached answers again.

Parsing the cached answers of the hundreds of chunks that feed a hub entity was most of the time of a
deletion; reading the stored records is a JSON decode. A stored form is used only while it still says what
parsing the chunk's answers would say now: it records the cache keys it was read from (a re-extracted
chunk has other keys) and a fingerprint of the parse inputs (the parser version, the project's entity
types, the name length limit). Otherwise — documents ingested before migration 0008 included — the rebuild
parses the cached answers as before.

Compact form: {"fp": fingerprint, "keys": [cache keys], "e": [[name, key, type, description], ...],
"r": [[src_name, tgt_name, src_key, tgt_key, [keywords], description, weight], ...]}.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from app.domain.extraction_parser import PARSER_VERSION
from app.domain.names import NAME_MAX_BYTES
from app.domain.records import ChunkExtraction, EntityRecord, RelationRecord


def parse_fingerprint(entity_types: Sequence[str] | None, name_max_length: int) -> str:
    """What, besides the answers, decides a parse: the parser version, the entity types and the name limits."""
    types = "\x1f".join(entity_types) if entity_types is not None else "\x1e"
    digest = hashlib.md5(types.encode("utf-8")).hexdigest()[:16]
    return f"{PARSER_VERSION}:{name_max_length}:{NAME_MAX_BYTES}:{digest}"


def encode(extraction: ChunkExtraction, cache_keys: Sequence[str], fingerprint: str) -> dict[str, Any]:
    return {
        "fp": fingerprint,
        "keys": list(cache_keys),
        "e": [[e.name, e.key, e.entity_type, e.description] for e in extraction.entities],
        "r": [
            [r.src_name, r.tgt_name, r.src_key, r.tgt_key, r.keywords, r.description, r.weight]
            for r in extraction.relations
        ],
    }


def decode(
    stored: Any, chunk_id: str, file_path: str | None, cache_keys: Sequence[str], fingerprint: str
) -> ChunkExtraction | None:
    """The chunk's records, or None when nothing usable is stored (absent, malformed, or read from other
    answers or with other parse inputs than the chunk's current ones)."""
    if not isinstance(stored, dict) or stored.get("fp") != fingerprint or stored.get("keys") != list(cache_keys):
        return None
    try:
        entities = [
            EntityRecord(name=n, key=k, entity_type=t, description=d, chunk_id=chunk_id, file_path=file_path)
            for n, k, t, d in stored["e"]
        ]
        relations = [
            RelationRecord(
                src_name=sn,
                tgt_name=tn,
                src_key=sk,
                tgt_key=tk,
                keywords=list(kw),
                description=d,
                weight=float(w),
                chunk_id=chunk_id,
                file_path=file_path,
            )
            for sn, tn, sk, tk, kw, d, w in stored["r"]
        ]
    except (KeyError, TypeError, ValueError):
        return None
    return ChunkExtraction(
        chunk_id=chunk_id,
        entities=entities,
        relations=relations,
        recovered=len(entities) + len(relations),
        completed=True,
    )


def as_merged(stored: Any, chunk_id: str, file_path: str | None) -> ChunkExtraction | None:
    """The chunk's records as its document's merge used them, whatever the parse inputs are now: for reading
    what that document said (its names and relations) again, not for rebuilding from current answers."""
    if not isinstance(stored, dict) or not isinstance(keys := stored.get("keys"), list):
        return None
    return decode(stored, chunk_id, file_path, keys, stored.get("fp", ""))
