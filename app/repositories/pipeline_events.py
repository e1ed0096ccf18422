"""SQL for the per-project log of pipeline events: written in the transaction that changes the document's
status, read by GET /pipeline and its event stream, pruned to the newest KEEP_PER_PROJECT per project."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, func, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables import pipeline_events

KEEP_PER_PROJECT = 500
KINDS = ("started", "finished", "failed", "retried", "cancelled")


async def add(conn: AsyncConnection, events: Sequence[tuple[str, str, str, str | None]]) -> None:
    """Record (project_id, document_id, kind, detail) events, then prune each project's log."""
    if not events:
        return
    await conn.execute(
        insert(pipeline_events),
        [{"project_id": p, "document_id": d, "kind": k, "detail": detail} for p, d, k, detail in events],
    )
    for project_id in sorted({e[0] for e in events}):
        oldest_kept = (
            select(pipeline_events.c.id)
            .where(pipeline_events.c.project_id == project_id)
            .order_by(pipeline_events.c.id.desc())
            .offset(KEEP_PER_PROJECT - 1)
            .limit(1)
            .scalar_subquery()
        )
        await conn.execute(
            delete(pipeline_events).where(
                pipeline_events.c.project_id == project_id, pipeline_events.c.id < oldest_kept
            )
        )


async def recent(conn: AsyncConnection, project_id: str, limit: int = 50, after: int | None = None) -> list[dict]:
    """The project's newest events, oldest first; with `after`, only those with a larger id."""
    query = select(pipeline_events).where(pipeline_events.c.project_id == project_id)
    if after is not None:
        query = query.where(pipeline_events.c.id > after)
    rows = await conn.execute(query.order_by(pipeline_events.c.id.desc()).limit(limit))
    return [dict(r) for r in reversed(rows.mappings().all())]


async def after(conn: AsyncConnection, project_id: str, after: int, limit: int) -> list[dict]:
    """The project's oldest `limit` events with an id larger than `after`, oldest first: a page forward."""
    rows = await conn.execute(
        select(pipeline_events)
        .where(pipeline_events.c.project_id == project_id, pipeline_events.c.id > after)
        .order_by(pipeline_events.c.id)
        .limit(limit)
    )
    return [dict(r) for r in rows.mappings()]


async def pruned_after(conn: AsyncConnection, project_id: str, after: int) -> bool:
    """Whether events newer than `after` may have been pruned: the log is full and starts past `after`."""
    kept, oldest = (
        await conn.execute(
            select(func.count(), func.min(pipeline_events.c.id)).where(pipeline_events.c.project_id == project_id)
        )
    ).one()
    return kept >= KEEP_PER_PROJECT and oldest > after


async def last_id(conn: AsyncConnection, project_id: str) -> int:
    query = (
        select(pipeline_events.c.id)
        .where(pipeline_events.c.project_id == project_id)
        .order_by(pipeline_events.c.id.desc())
        .limit(1)
    )
    return int(await conn.scalar(query) or 0)
