"""SQL for the parsed extraction records stored with chunks (chunks.extraction_records, migration 0008)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import bindparam, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables import chunks


async def store(conn: AsyncConnection, project_id: str, rows: Sequence[tuple[str, dict[str, Any]]]) -> None:
    """(chunk_id, encoded records), set in one executemany, alongside the chunk's extraction cache keys."""
    if not rows:
        return
    stmt = (
        update(chunks)
        .where(chunks.c.project_id == project_id, chunks.c.id == bindparam("cid"))
        .values(extraction_records=bindparam("records", type_=chunks.c.extraction_records.type))
    )
    await conn.execute(stmt, [{"cid": c, "records": r} for c, r in rows])


async def backfill(
    conn: AsyncConnection, project_id: str, rows: Sequence[tuple[str, list[str], dict[str, Any]]]
) -> None:
    """(chunk_id, the cache keys the records were parsed from, encoded records): stored only where the chunk
    still lists exactly those keys (a chunk extracted again meanwhile keeps its newer records)."""
    if not rows:
        return
    stmt = (
        update(chunks)
        .where(
            chunks.c.project_id == project_id,
            chunks.c.id == bindparam("cid"),
            chunks.c.extraction_cache_keys == bindparam("keys", type_=chunks.c.extraction_cache_keys.type),
        )
        .values(extraction_records=bindparam("records", type_=chunks.c.extraction_records.type))
    )
    await conn.execute(stmt, [{"cid": c, "keys": k, "records": r} for c, k, r in sorted(rows, key=lambda r: r[0])])


async def of_document(conn: AsyncConnection, project_id: str, document_id: str) -> list[tuple[str, str | None, Any]]:
    """(chunk_id, file_path, stored records) of the document's chunks, in their order: what its merge used."""
    stmt = (
        select(chunks.c.id, chunks.c.file_path, chunks.c.extraction_records)
        .where(chunks.c.project_id == project_id, chunks.c.document_id == document_id)
        .order_by(chunks.c.order_index)
    )
    return [(r.id, r.file_path, r.extraction_records) for r in (await conn.execute(stmt)).all()]
