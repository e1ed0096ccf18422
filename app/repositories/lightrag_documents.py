"""Document reads the LightRAG Server compatibility routes need beyond app/repositories/documents.py: a page
sorted by any of LightRAG's sort fields, and the documents of one track id (kept in the document metadata
under TRACK_ID_KEY by the compatibility ingestion)."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables import documents
from app.repositories.documents import USER_DOCUMENT

TRACK_ID_KEY = "lightrag_track_id"
MAX_TRACKED = 10_000  # documents listed for one track id

_COLUMNS = [
    documents.c.id,
    documents.c.status,
    documents.c.error,
    documents.c.file_path,
    documents.c.metadata,
    documents.c.content_length,
    documents.c.chunks_count,
    documents.c.created_at,
    documents.c.updated_at,
    func.left(documents.c.content, 250).label("content_summary"),
]
_SORTABLE = {
    "created_at": documents.c.created_at,
    "updated_at": documents.c.updated_at,
    "id": documents.c.id,
    "file_path": documents.c.file_path,
}


async def page(
    conn: AsyncConnection,
    project_id: str,
    status: str | None,
    sort_field: str,
    descending: bool,
    limit: int,
    offset: int,
) -> tuple[list[dict], int]:
    where = [documents.c.project_id == project_id, USER_DOCUMENT]
    if status:
        where.append(documents.c.status == status)
    total = await conn.scalar(select(func.count()).select_from(documents).where(*where))
    column = _SORTABLE[sort_field]
    order = column.desc().nulls_last() if descending else column.asc().nulls_last()
    rows = await conn.execute(
        select(*_COLUMNS).where(*where).order_by(order, documents.c.id).limit(limit).offset(offset)
    )
    return [dict(r) for r in rows.mappings()], int(total or 0)


async def by_track_id(conn: AsyncConnection, project_id: str, track_id: str) -> list[dict]:
    rows = await conn.execute(
        select(*_COLUMNS)
        .where(documents.c.project_id == project_id, documents.c.metadata[TRACK_ID_KEY].astext == track_id)
        .order_by(documents.c.created_at, documents.c.id)
        .limit(MAX_TRACKED)
    )
    return [dict(r) for r in rows.mappings()]
