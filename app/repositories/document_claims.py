"""SQL of the work queue's claims on documents: a worker takes the oldest pending document (or one whose claim
went stale) with FOR UPDATE SKIP LOCKED, heartbeats the claims it works on, ends the stale claims that used every
attempt, and gives its claims back when it stops. The claim a merge checks is in documents.py (`lock_claim`)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import and_, func, select, text, tuple_, update
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables import documents
from app.domain.document_rows import Claim, EndedClaim
from app.repositories.workers import CLAIMANT_DEAD

# A claim is stale when its worker is known dead (missed its heartbeats), or, for a worker that is not known
# (an older version, or a row already pruned) or alive but no longer heartbeating this document (its task
# ended without its final write), when the document's own heartbeat is older than the claim timeout. A worker
# asking is alive, whatever its liveness row says: its beats may run late on a starved machine, and it must not
# retake (or end as abandoned) a document it is still processing.
_STALE_CLAIM = (
    "(heartbeat_at < now() - make_interval(secs => :timeout)"
    f" OR (claimed_by IS DISTINCT FROM CAST(:worker AS text) AND {CLAIMANT_DEAD}))"
)


# A claimed document is at the pipeline's first stage (services/ingest/progress.py STAGES) from the claim on,
# so progress readers never see a processing document without a stage.
CLAIMED_STAGE = "chunking"


async def claim_next(conn: AsyncConnection, worker_id: str, claim_timeout: float, max_attempts: int) -> Claim | None:
    """Take the oldest pending document (or one whose claim went stale, see `_STALE_CLAIM`) for `worker_id`."""
    row = (
        (
            await conn.execute(
                text(
                    "UPDATE documents SET status = 'processing', claimed_by = :worker, heartbeat_at = now(),"
                    " started_at = now(), updated_at = now(), attempts = attempts + 1, error = NULL,"
                    " finished_at = NULL, stage = :first_stage, progress = NULL"
                    " WHERE (project_id, id) = ("
                    "  SELECT project_id, id FROM documents"
                    "  WHERE status = 'pending' OR (status = 'processing' AND NOT cancel_requested"
                    f"        AND {_STALE_CLAIM} AND attempts < :max_attempts)"
                    "  ORDER BY created_at, id FOR UPDATE SKIP LOCKED LIMIT 1)"
                    " RETURNING project_id, id, attempts, graph_merged"
                ),
                {
                    "worker": worker_id,
                    "timeout": claim_timeout,
                    "max_attempts": max_attempts,
                    "first_stage": CLAIMED_STAGE,
                },
            )
        )
        .mappings()
        .first()
    )
    return Claim.from_row(row) if row else None


async def fail_abandoned(
    conn: AsyncConnection, worker_id: str, claim_timeout: float, max_attempts: int
) -> list[EndedClaim]:
    """Stale claims that already used every attempt become failed instead of being retaken forever; stale
    claims of documents whose cancellation was asked become cancelled. Returns (project_id, id, status)."""
    rows = await conn.execute(
        text(
            "UPDATE documents SET claimed_by = NULL, finished_at = now(), updated_at = now(),"
            " status = CASE WHEN cancel_requested THEN 'cancelled' ELSE 'failed' END,"
            " error = CASE WHEN cancel_requested THEN 'cancelled on request' ELSE"
            "  'abandoned: its worker stopped ' || attempts || ' time(s) while processing it; retry it' END"
            f" WHERE status = 'processing' AND {_STALE_CLAIM}"
            " AND (attempts >= :max_attempts OR cancel_requested)"
            " RETURNING project_id, id, status, error"
        ),
        {"timeout": claim_timeout, "max_attempts": max_attempts, "worker": worker_id},
    )
    return [EndedClaim.from_row(r) for r in rows.mappings()]


async def heartbeat(conn: AsyncConnection, worker_id: str, keys: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Refresh only the claims the worker is really working on: a document whose task ended without its
    final write (database down at that moment) must go stale so it is retaken, not stay processing forever.
    Returns the claimed documents whose cancellation was asked."""
    if not keys:
        return []
    # rows another transaction holds (a merge) wait for the next beat: waiting here would hold up the others
    c, claim = documents.c, tuple_(documents.c.project_id, documents.c.id)
    free = select(c.project_id, c.id).where(c.claimed_by == worker_id, c.status == "processing", claim.in_(list(keys)))
    rows = await conn.execute(
        update(documents)
        .where(claim.in_(free.with_for_update(key_share=True, skip_locked=True)))
        .values(heartbeat_at=func.now())
        .returning(documents.c.project_id, documents.c.id, documents.c.cancel_requested)
    )
    return [(r[0], r[1]) for r in rows if r[2]]


async def release(conn: AsyncConnection, worker_id: str, keys: Sequence[tuple[str, str]] | None = None) -> int:
    """Give claimed documents back to the queue (graceful shutdown): not counted as an attempt."""
    c = documents.c
    where = [c.claimed_by == worker_id, c.status == "processing"]
    if keys is not None:
        if not keys:
            return 0
        where.append(tuple_(c.project_id, c.id).in_(list(keys)))
    result = await conn.execute(
        update(documents)
        .where(and_(*where))
        .values(
            status="pending",
            claimed_by=None,
            heartbeat_at=None,
            stage=None,
            progress=None,
            attempts=func.greatest(c.attempts - 1, 0),
            updated_at=func.now(),
        )
    )
    return result.rowcount or 0
