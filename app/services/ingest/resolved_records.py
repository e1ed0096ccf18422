"""Cached extractions as the merge mapped their names (services/ingest/name_resolution.py): what deletion and
unmerge rebuild from, so a rebuilt item keeps its resolved records."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from app.domain.aliases import scoped_key
from app.domain.document_names import document_names, remap
from app.domain.records import ChunkExtraction
from app.repositories import aliases as aliases_repo


async def resolved_extractions(
    conn: AsyncConnection, project_id: str, extractions: dict[str, ChunkExtraction]
) -> dict[str, ChunkExtraction]:
    """Cached extractions (chunk id → records) with names mapped to the entities their aliases name, as the
    merge mapped them: an alias scoped to the chunk's document first, then a project-wide alias of a name
    that is not itself an entity. Deletion rebuilds read them, so a rebuilt item keeps its resolved records.
    A handful of set-based queries whatever the number of chunks and documents; none without aliases."""
    if not extractions or not await aliases_repo.has_aliases(conn, project_id):
        return extractions  # before reading the names of thousands of records
    keys_by_chunk = {cid: set(document_names([x]).names) for cid, x in extractions.items()}
    all_keys = set().union(*keys_by_chunk.values())
    if not all_keys:
        return extractions
    keys_by_document: dict[str, set[str]] = {}
    chunks_by_document: dict[str, list[str]] = {}
    for chunk_id, document_id in (await aliases_repo.document_of_chunks(conn, project_id, extractions)).items():
        keys_by_document.setdefault(document_id, set()).update(keys_by_chunk[chunk_id])
        chunks_by_document.setdefault(document_id, []).append(chunk_id)
    wanted = all_keys | {scoped_key(k, d) for d, keys in keys_by_document.items() for k in keys}
    found = await aliases_repo.alias_targets(conn, project_id, wanted)
    if not found:
        return extractions
    entities_now = set(await aliases_repo.entity_types(conn, project_id, all_keys))
    out = dict(extractions)
    for document_id, keys in sorted(keys_by_document.items()):
        targets: dict[str, str] = {}
        for key in keys:
            target = found.get(scoped_key(key, document_id))  # a scoped alias always applies
            if target is None and key not in entities_now:
                target = found.get(key)
            if target is not None:
                targets[key] = target
        if targets:
            chunk_ids = sorted(chunks_by_document[document_id])
            for cid, mapped in zip(chunk_ids, remap([extractions[c] for c in chunk_ids], targets), strict=True):
                out[cid] = mapped
    return out
