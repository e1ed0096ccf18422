"""The extraction records a deletion rebuild reads, per remaining chunk, without any extraction call.

Chunks extracted since migration 0008 carry their parsed records (app/domain/chunk_records.py): those are
decoded. The others (extracted before, or stored with other parse inputs) have their cached pass answers
parsed again, each distinct answer list once however many chunks share it (identical chunk content hits
one cache entry); their records are then stored so the next rebuild reads them directly.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.engine import Database
from app.domain.chunk_records import decode, encode, parse_fingerprint
from app.domain.merge_rules import UNKNOWN_SOURCE
from app.domain.records import ChunkExtraction
from app.domain.rows import ChunkCacheRef
from app.repositories import chunk_records as records_repo
from app.repositories import deletion as repo
from app.repositories import llm_cache as cache_repo
from app.services.ingest.extraction import extraction_from_cached

log = logging.getLogger(__name__)


@dataclass
class RebuildInputs:
    extractions: dict[str, ChunkExtraction]  # chunk id → its records
    paths: dict[str, str]  # chunk id → file path
    # (chunk id, cache keys, encoded records) parsed from the cache this time, to store after the deletion
    parsed: list[tuple[str, list[str], dict[str, Any]]] = field(default_factory=list)


async def read_inputs(
    conn: AsyncConnection, project_id: str, chunk_ids: list[str], entity_types: list[str], name_max_length: int
) -> RebuildInputs:
    rows = await repo.chunk_rebuild_inputs(conn, project_id, chunk_ids)
    fingerprint = parse_fingerprint(entity_types, name_max_length)
    paths = {cid: ref.file_path or UNKNOWN_SOURCE for cid, (ref, _) in rows.items()}
    extractions: dict[str, ChunkExtraction] = {}
    unparsed: list[ChunkCacheRef] = []
    for cid, (ref, stored) in rows.items():
        found = decode(stored, cid, paths[cid], ref.extraction_cache_keys, fingerprint) if stored else None
        if found is not None:
            extractions[cid] = found
        else:
            unparsed.append(ref)
    inputs = RebuildInputs(extractions, paths)
    if unparsed:
        await _parse_cached(conn, project_id, unparsed, inputs, entity_types, name_max_length, fingerprint)
    return inputs


async def _parse_cached(
    conn: AsyncConnection,
    project_id: str,
    refs: list[ChunkCacheRef],
    into: RebuildInputs,
    entity_types: list[str],
    name_max_length: int,
    fingerprint: str,
) -> None:
    """Parse the cached pass answers (first pass, then gleanings) of chunks without usable stored records."""
    cached = await cache_repo.get_many(conn, project_id, [k for c in refs for k in c.extraction_cache_keys])
    by_answers: dict[tuple[str, ...], list[ChunkCacheRef]] = {}
    for ref in refs:
        keys = ref.extraction_cache_keys
        present = tuple(k for k in keys if k in cached)
        if len(present) != len(keys) or not present:
            log.warning("chunk %s: cached extraction incomplete; items found nowhere else keep their text", ref.id)
        if present:
            by_answers.setdefault(present, []).append(ref)

    def parse_all() -> None:
        for keys, sharing in by_answers.items():
            first = sharing[0]
            parsed = extraction_from_cached(
                [cached[k]["response"] for k in keys], first.id, into.paths[first.id], name_max_length, entity_types
            )
            for ref in sharing:
                into.extractions[ref.id] = parsed if ref is first else _restamped(parsed, ref.id, into.paths[ref.id])
                if len(keys) == len(ref.extraction_cache_keys):
                    into.parsed.append((ref.id, list(keys), encode(parsed, keys, fingerprint)))

    # hub entities can pull in hundreds of chunks: parse off the event loop
    await asyncio.to_thread(parse_all)


def _restamped(x: ChunkExtraction, chunk_id: str, file_path: str) -> ChunkExtraction:
    return replace(
        x,
        chunk_id=chunk_id,
        entities=[replace(e, chunk_id=chunk_id, file_path=file_path) for e in x.entities],
        relations=[replace(r, chunk_id=chunk_id, file_path=file_path, keywords=list(r.keywords)) for r in x.relations],
    )


async def store_parsed(db: Database, project_id: str, inputs: RebuildInputs) -> None:
    """Store the records parsed from the cache (best effort: the deletion has committed already)."""
    if not inputs.parsed:
        return
    try:
        async with db.transaction() as conn:
            await records_repo.backfill(conn, project_id, inputs.parsed)
    except Exception as exc:
        log.warning("could not store the parsed records of %d chunks: %s", len(inputs.parsed), type(exc).__name__)
