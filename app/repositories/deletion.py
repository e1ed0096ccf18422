"""SQL for document deletion: the document rows under lock, its chunks and their cache keys, the cached
extraction inputs of the chunks that remain, and the relations a deleted entity takes with it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables import chunks, documents, entity_sources, relation_sources, relations
from app.domain.rows import ChunkCacheRef
from app.repositories.graph import pair_rows

Pair = tuple[str, str]


async def lock_documents(conn: AsyncConnection, project_id: str, document_ids: Sequence[str], *,
                         lock: bool = True) -> dict[str, dict]:
    """id → status row of those documents that exist; with `lock`, locked in id order until the
    transaction ends (no worker can claim them, and two batch deletions never lock in opposite orders)."""
    query = (select(documents.c.id, documents.c.status, documents.c.file_path)
             .where(documents.c.project_id == project_id, documents.c.id.in_(list(document_ids)))
             .order_by(documents.c.id))
    rows = await conn.execute(query.with_for_update() if lock else query)
    return {r["id"]: dict(r) for r in rows.mappings()}


async def keys_of_documents(conn: AsyncConnection, project_id: str,
                            document_ids: Sequence[str]) -> tuple[list[str], list[Pair]]:
    """Entity keys and relation pairs that have provenance in any of the documents (sorted)."""
    ids = list(document_ids)
    ents = await conn.execute(
        select(entity_sources.c.entity_key).distinct()
        .where(entity_sources.c.project_id == project_id, entity_sources.c.document_id.in_(ids))
        .order_by(entity_sources.c.entity_key)
    )
    rels = await conn.execute(
        select(relation_sources.c.src_key, relation_sources.c.tgt_key).distinct()
        .where(relation_sources.c.project_id == project_id, relation_sources.c.document_id.in_(ids))
        .order_by(relation_sources.c.src_key, relation_sources.c.tgt_key)
    )
    return [r[0] for r in ents], [(r[0], r[1]) for r in rels]


async def chunks_of_documents(conn: AsyncConnection, project_id: str,
                              document_ids: Sequence[str]) -> list[ChunkCacheRef]:
    rows = await conn.execute(
        select(chunks.c.id, chunks.c.file_path, chunks.c.extraction_cache_keys)
        .where(chunks.c.project_id == project_id, chunks.c.document_id.in_(list(document_ids)))
        .order_by(chunks.c.document_id, chunks.c.order_index)
    )
    return [ChunkCacheRef.from_row(r) for r in rows.mappings()]


async def chunk_rebuild_inputs(conn: AsyncConnection, project_id: str,
                               chunk_ids: Sequence[str]) -> dict[str, tuple[ChunkCacheRef, Any]]:
    """chunk id → (its cache references, its stored parsed records or None), for the given chunks."""
    if not chunk_ids:
        return {}
    rows = await conn.execute(
        select(chunks.c.id, chunks.c.file_path, chunks.c.extraction_cache_keys, chunks.c.extraction_records)
        .where(chunks.c.project_id == project_id, chunks.c.id.in_(set(chunk_ids)))
    )
    return {r["id"]: (ChunkCacheRef.from_row(r), r["extraction_records"]) for r in rows.mappings()}


async def pairs_touching(conn: AsyncConnection, project_id: str, keys: Sequence[str]) -> list[Pair]:
    if not keys:
        return []
    keyset = set(keys)
    rows = await conn.execute(
        select(relations.c.src_key, relations.c.tgt_key)
        .where(relations.c.project_id == project_id,
               or_(relations.c.src_key.in_(keyset), relations.c.tgt_key.in_(keyset)))
    )
    return [(r[0], r[1]) for r in rows]


async def delete_relations(conn: AsyncConnection, project_id: str, pairs: Sequence[Pair]) -> None:
    """Delete the relations of these pairs (provenance cascades), joined on the primary key."""
    if not pairs:
        return
    wanted = pair_rows(pairs)
    await conn.execute(delete(relations).where(
        relations.c.project_id == project_id, relations.c.src_key == wanted.c.s, relations.c.tgt_key == wanted.c.t))


async def delete_documents(conn: AsyncConnection, project_id: str, document_ids: Sequence[str]) -> None:
    """Chunks and every provenance row pointing at them go with them (foreign-key cascades)."""
    await conn.execute(delete(documents).where(documents.c.project_id == project_id,
                                               documents.c.id.in_(list(document_ids))))
