"""SQL for chunks: bulk upsert (keeping embeddings of unchanged content), extraction cache links, vectors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Column, bindparam, case, delete, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables import chunks
from app.domain.rows import ChunkRow

_CHUNK_ROW_COLUMNS = ("id", "order_index", "tokens", "start_token", "end_token", "content", "file_path")


async def replace_for_document(
    conn: AsyncConnection, project_id: str, document_id: str, rows: Sequence[ChunkRow]
) -> None:
    """Store a document's chunks.

    Re-chunking a retried document keeps the embedding (and cache links) of chunks whose content did not
    change, and drops chunks that no longer exist.
    """
    ids = [r.id for r in rows]
    await conn.execute(
        delete(chunks).where(
            chunks.c.project_id == project_id, chunks.c.document_id == document_id, chunks.c.id.not_in(ids)
        )
    )
    values = [
        {
            "project_id": project_id,
            "document_id": document_id,
            "id": r.id,
            "order_index": r.order_index,
            "tokens": r.tokens,
            "start_token": r.start_token,
            "end_token": r.end_token,
            "content": r.content,
            "file_path": r.file_path,
        }
        for r in rows
    ]
    if not values:
        return
    stmt = pg_insert(chunks)
    same = chunks.c.content == stmt.excluded.content
    await conn.execute(
        stmt.on_conflict_do_update(
            index_elements=["project_id", "id"],
            set_={
                "order_index": stmt.excluded.order_index,
                "tokens": stmt.excluded.tokens,
                "start_token": stmt.excluded.start_token,
                "end_token": stmt.excluded.end_token,
                "content": stmt.excluded.content,
                "file_path": stmt.excluded.file_path,
                "embedding": case((same, chunks.c.embedding), else_=None),
                "extraction_cache_keys": case((same, chunks.c.extraction_cache_keys), else_=[]),
            },
        ),
        values,
    )


async def list_for_document(conn: AsyncConnection, project_id: str, document_id: str) -> list[dict]:
    cols = [c for c in chunks.c if c.name not in ("embedding", "search_vector")]
    rows = await conn.execute(
        select(*cols, chunks.c.embedding.is_not(None).label("embedded"))
        .where(chunks.c.project_id == project_id, chunks.c.document_id == document_id)
        .order_by(chunks.c.order_index)
    )
    return [dict(r) for r in rows.mappings()]


async def unembedded(conn: AsyncConnection, project_id: str, document_id: str) -> list[ChunkRow]:
    """The document's chunks that have no embedding yet, in order."""
    rows = await conn.execute(
        select(*(chunks.c[name] for name in _CHUNK_ROW_COLUMNS))
        .where(chunks.c.project_id == project_id, chunks.c.document_id == document_id, chunks.c.embedding.is_(None))
        .order_by(chunks.c.order_index)
    )
    return [ChunkRow.from_row(r) for r in rows.mappings()]


async def set_extraction_keys(conn: AsyncConnection, project_id: str, rows: Sequence[tuple[str, list[str]]]) -> None:
    """(chunk_id, ordered llm_cache keys of its extraction passes)."""
    await _set_column(conn, project_id, chunks.c.extraction_cache_keys, rows)


async def set_embeddings(conn: AsyncConnection, project_id: str, rows: Sequence[tuple[str, list[float]]]) -> None:
    await _set_column(conn, project_id, chunks.c.embedding, rows)


async def _set_column(conn: AsyncConnection, project_id: str, column: Column, rows: Sequence[tuple[str, Any]]) -> None:
    """Set one column of many chunks, (chunk_id, value) each, in one executemany."""
    if not rows:
        return
    stmt = (
        update(chunks)
        .where(chunks.c.project_id == project_id, chunks.c.id == bindparam("cid"))
        .values({column.name: bindparam("value", type_=column.type)})
    )
    await conn.execute(stmt, [{"cid": c, "value": v} for c, v in rows])
