"""SQL for worker liveness: each worker records when it was last seen and its heartbeat interval. A worker
missing `MISSED_HEARTBEATS` of its own heartbeats in a row is dead: its claims are retaken at once
(repositories/document_claims.py), without waiting for WORKER_CLAIM_TIMEOUT."""

from __future__ import annotations

from sqlalchemy import delete, func, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables import workers

MISSED_HEARTBEATS = 3

# SQL condition on `documents`: the worker holding the claim stopped heartbeating (no row: not known dead).
CLAIMANT_DEAD = (
    "EXISTS (SELECT 1 FROM workers w WHERE w.id = documents.claimed_by"
    f" AND w.last_seen < now() - make_interval(secs => w.heartbeat_interval * {MISSED_HEARTBEATS}))"
)


async def seen(conn: AsyncConnection, worker_id: str, heartbeat_interval: float) -> None:
    """Register the worker, or record that it is alive now."""
    stmt = pg_insert(workers).values(id=worker_id, heartbeat_interval=heartbeat_interval)
    await conn.execute(
        stmt.on_conflict_do_update(
            index_elements=[workers.c.id],
            set_={"last_seen": func.now(), "heartbeat_interval": stmt.excluded.heartbeat_interval},
        )
    )


async def forget(conn: AsyncConnection, worker_id: str) -> None:
    """A worker that stopped cleanly (its claims already handed back)."""
    await conn.execute(delete(workers).where(workers.c.id == worker_id))


async def prune(conn: AsyncConnection, claim_timeout: float) -> int:
    """Drop workers unseen for twice the claim timeout (and ten of their intervals): by then their claims
    are stale by the claim timeout too, so the rows are no longer needed to retake them."""
    result = await conn.execute(
        text(
            "DELETE FROM workers WHERE last_seen < now() - make_interval("
            "secs => greatest(2 * CAST(:timeout AS double precision), 10 * heartbeat_interval))"
        ),
        {"timeout": claim_timeout},
    )
    return result.rowcount or 0


async def live_count(conn: AsyncConnection) -> int:
    """Workers that heartbeat within their tolerance."""
    return int(
        await conn.scalar(
            text(
                "SELECT count(*) FROM workers"
                f" WHERE last_seen >= now() - make_interval(secs => heartbeat_interval * {MISSED_HEARTBEATS})"
            )
        )
        or 0
    )
