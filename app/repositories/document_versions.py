"""SQL for documents that change: queued updates (document rows with `update_of`), the chunks an update
keeps, moves or removes, the document's current version and its version history (migration 0012)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import bindparam, delete, func, select, text, update
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables import chunks, document_versions, documents, entity_sources, relation_sources
from app.domain.chunk_diff import OldChunk
from app.domain.rows import ChunkCacheRef
from app.repositories.documents import USER_DOCUMENT
from app.repositories.graph import any_of

Pair = tuple[str, str]

UPDATE_COLUMNS = (
    documents.c.id,
    documents.c.status,
    documents.c.error,
    documents.c.stage,
    documents.c.progress,
    documents.c.created_at,
    documents.c.updated_at,
)


async def updates_of(conn: AsyncConnection, project_id: str, document_id: str) -> list[dict]:
    """The queued updates of a document (any status), oldest first."""
    rows = await conn.execute(
        select(*UPDATE_COLUMNS)
        .where(documents.c.project_id == project_id, documents.c.update_of == document_id)
        .order_by(documents.c.created_at, documents.c.id)
    )
    return [dict(r) for r in rows.mappings()]


async def delete_updates(conn: AsyncConnection, project_id: str, ids: Sequence[str]) -> None:
    if ids:
        await conn.execute(delete(documents).where(documents.c.project_id == project_id, documents.c.id == any_of(ids)))


async def owner_of_hash(conn: AsyncConnection, project_id: str, content_hash: str) -> str | None:
    return await conn.scalar(
        select(documents.c.id).where(documents.c.project_id == project_id, documents.c.content_hash == content_hash)
    )


async def document_ids_by_path(
    conn: AsyncConnection, project_id: str, file_paths: Sequence[str]
) -> dict[str, list[str]]:
    """file path → ids of the project's documents with that file name, oldest first."""
    if not file_paths:
        return {}
    rows = await conn.execute(
        select(documents.c.file_path, documents.c.id)
        .where(
            documents.c.project_id == project_id,
            documents.c.file_path == any_of(set(file_paths)),
            USER_DOCUMENT,
        )
        .order_by(documents.c.created_at, documents.c.id)
    )
    found: dict[str, list[str]] = {}
    for path, document_id in rows:
        found.setdefault(path, []).append(document_id)
    return found


async def old_chunks(conn: AsyncConnection, project_id: str, document_id: str) -> list[OldChunk]:
    rows = await conn.execute(
        select(chunks.c.id, chunks.c.content, chunks.c.start_token, chunks.c.end_token)
        .where(chunks.c.project_id == project_id, chunks.c.document_id == document_id)
        .order_by(chunks.c.order_index)
    )
    return [OldChunk(r[0], r[1], r[2], r[3]) for r in rows]


async def keys_of_chunks(
    conn: AsyncConnection, project_id: str, chunk_ids: Sequence[str]
) -> tuple[list[str], list[Pair]]:
    """Entity keys and relation pairs with provenance in any of these chunks (sorted)."""
    if not chunk_ids:
        return [], []
    ids = any_of(chunk_ids)
    ents = await conn.execute(
        select(entity_sources.c.entity_key)
        .distinct()
        .where(entity_sources.c.project_id == project_id, entity_sources.c.chunk_id == ids)
        .order_by(entity_sources.c.entity_key)
    )
    rels = await conn.execute(
        select(relation_sources.c.src_key, relation_sources.c.tgt_key)
        .distinct()
        .where(relation_sources.c.project_id == project_id, relation_sources.c.chunk_id == ids)
        .order_by(relation_sources.c.src_key, relation_sources.c.tgt_key)
    )
    return [r[0] for r in ents], [(r[0], r[1]) for r in rels]


async def chunk_refs(conn: AsyncConnection, project_id: str, chunk_ids: Sequence[str]) -> list[ChunkCacheRef]:
    if not chunk_ids:
        return []
    rows = await conn.execute(
        select(chunks.c.id, chunks.c.file_path, chunks.c.extraction_cache_keys)
        .where(chunks.c.project_id == project_id, chunks.c.id == any_of(chunk_ids))
        .order_by(chunks.c.id)
    )
    return [ChunkCacheRef.from_row(r) for r in rows.mappings()]


async def delete_chunks(conn: AsyncConnection, project_id: str, chunk_ids: Sequence[str]) -> None:
    """Their provenance rows go with them (foreign-key cascades)."""
    if chunk_ids:
        await conn.execute(delete(chunks).where(chunks.c.project_id == project_id, chunks.c.id == any_of(chunk_ids)))


_PLACED = text("""
UPDATE chunks c
   SET document_id = :document_id, order_index = p.order_index, start_token = p.start_token,
       end_token = p.end_token, file_path = :file_path
  FROM jsonb_to_recordset(:rows) AS p(id text, order_index int, start_token int, end_token int)
 WHERE c.project_id = :project_id AND c.id = p.id
""").bindparams(bindparam("rows", type_=JSONB))


async def place_chunks(
    conn: AsyncConnection, project_id: str, document_id: str, file_path: str | None, rows: Sequence[dict[str, Any]]
) -> None:
    """Give these chunks (kept or new) to the document at their new positions."""
    if rows:
        await conn.execute(
            _PLACED, {"rows": list(rows), "project_id": project_id, "document_id": document_id, "file_path": file_path}
        )


async def record_version(conn: AsyncConnection, project_id: str, document_id: str, **values: Any) -> None:
    """One version row (kept if it exists: the first update records the version it replaces)."""
    stmt = pg_insert(document_versions).values(project_id=project_id, document_id=document_id, **values)
    await conn.execute(stmt.on_conflict_do_nothing())


async def set_current(conn: AsyncConnection, project_id: str, document_id: str, **values: Any) -> None:
    await conn.execute(
        update(documents)
        .where(documents.c.project_id == project_id, documents.c.id == document_id)
        .values(**values, updated_at=func.now())
    )


async def versions(conn: AsyncConnection, project_id: str, document_id: str) -> list[dict]:
    rows = await conn.execute(
        select(document_versions)
        .where(document_versions.c.project_id == project_id, document_versions.c.document_id == document_id)
        .order_by(document_versions.c.version)
    )
    return [dict(r) for r in rows.mappings()]
