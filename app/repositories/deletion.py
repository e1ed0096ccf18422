"""SQL for document deletion: the document row under lock, its chunks and their cache keys, the cached
extraction inputs of the chunks that remain, and the relations a deleted entity takes with it."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables import chunks, documents, relations

Pair = tuple[str, str]


async def lock_document(conn: AsyncConnection, project_id: str, document_id: str, *,
                        lock: bool = True) -> dict | None:
    """The document's status row; with `lock`, locked until the transaction ends (no worker can claim it)."""
    query = (select(documents.c.id, documents.c.status, documents.c.file_path)
             .where(documents.c.project_id == project_id, documents.c.id == document_id))
    row = (await conn.execute(query.with_for_update() if lock else query)).mappings().first()
    return dict(row) if row else None


async def chunks_of_document(conn: AsyncConnection, project_id: str, document_id: str) -> list[dict]:
    rows = await conn.execute(
        select(chunks.c.id, chunks.c.extraction_cache_keys)
        .where(chunks.c.project_id == project_id, chunks.c.document_id == document_id)
        .order_by(chunks.c.order_index)
    )
    return [dict(r) for r in rows.mappings()]


async def chunk_cache_inputs(conn: AsyncConnection, project_id: str, chunk_ids: Sequence[str]) -> dict[str, dict]:
    """chunk id → {file_path, extraction_cache_keys} for the given chunks (by primary key)."""
    if not chunk_ids:
        return {}
    rows = await conn.execute(
        select(chunks.c.id, chunks.c.file_path, chunks.c.extraction_cache_keys)
        .where(chunks.c.project_id == project_id, chunks.c.id.in_(set(chunk_ids)))
    )
    return {r["id"]: dict(r) for r in rows.mappings()}


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


async def delete_document(conn: AsyncConnection, project_id: str, document_id: str) -> None:
    """Chunks and every provenance row pointing at them go with it (foreign-key cascades)."""
    await conn.execute(delete(documents).where(documents.c.project_id == project_id,
                                               documents.c.id == document_id))
