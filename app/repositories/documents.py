"""SQL for documents, which are also the work queue (claimed with FOR UPDATE SKIP LOCKED)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, literal, or_, select, text, update
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from app.core.usage import Usage
from app.db.tables import documents
from app.domain.document_rows import (
    CancelTarget,
    DocumentRow,
    DocumentState,
    HeldClaim,
    InFlightDocument,
    KnownDocument,
)

STATUSES = ("pending", "processing", "processed", "failed", "cancelled")
_SUMMARY = func.left(documents.c.content, 250).label("content_summary")
_LISTED = [c for c in documents.c if c.name != "content"]

# A document a user has, not an update's own row (`<id>@v<n>`, `update_of` set): the listings, the counts and
# the lookups by file name see those only through the document they update.
USER_DOCUMENT = documents.c.update_of.is_(None)


async def find_existing(
    conn: AsyncConnection, project_id: str, ids: Sequence[str], hashes: Sequence[str]
) -> list[KnownDocument]:
    """Documents of the project having one of these ids or content hashes."""
    rows = await conn.execute(
        select(documents.c.id, documents.c.content_hash, documents.c.status).where(
            documents.c.project_id == project_id,
            or_(documents.c.id.in_(list(ids)), documents.c.content_hash.in_(list(hashes))),
        )
    )
    return [KnownDocument.from_row(r) for r in rows.mappings()]


async def insert_new(conn: AsyncConnection, project_id: str, rows: Sequence[dict[str, Any]]) -> set[str]:
    """Insert pending documents; ids that collide (same id or content hash, e.g. a concurrent request)
    are skipped. Returns the ids actually inserted."""
    if not rows:
        return set()
    stmt = pg_insert(documents).values([{"project_id": project_id, **r} for r in rows])
    result = await conn.execute(stmt.on_conflict_do_nothing().returning(documents.c.id))
    return {r[0] for r in result}


async def get(conn: AsyncConnection, project_id: str, document_id: str, *, content: bool = False) -> DocumentRow | None:
    cols = list(documents.c) if content else [*_LISTED, _SUMMARY]
    row = (
        (await conn.execute(select(*cols).where(documents.c.project_id == project_id, documents.c.id == document_id)))
        .mappings()
        .first()
    )
    return DocumentRow.from_row(row) if row else None


async def list_page(
    conn: AsyncConnection, project_id: str, status: str | None, limit: int, offset: int
) -> tuple[list[DocumentRow], int]:
    where = [documents.c.project_id == project_id, USER_DOCUMENT]
    if status:
        where.append(documents.c.status == status)
    total = await conn.scalar(select(func.count()).select_from(documents).where(*where))
    rows = await conn.execute(
        select(*_LISTED, _SUMMARY)
        .where(*where)
        .order_by(documents.c.created_at.desc(), documents.c.id)
        .limit(limit)
        .offset(offset)
    )
    return [DocumentRow.from_row(r) for r in rows.mappings()], int(total or 0)


async def count_by_status(conn: AsyncConnection, project_id: str | None = None) -> dict[str, int]:
    """Documents per status; a queued update's own row counts only while it is work to do (pending or
    processing): once it ends, the document it updated is what the listings show."""
    pending_work = documents.c.status.in_(("pending", "processing"))
    query = (
        select(documents.c.status, func.count()).where(or_(USER_DOCUMENT, pending_work)).group_by(documents.c.status)
    )
    if project_id is not None:
        query = query.where(documents.c.project_id == project_id)
    counts = dict.fromkeys(STATUSES, 0)
    counts.update({status: int(n) for status, n in (await conn.execute(query)).all()})
    return counts


async def statuses(conn: AsyncConnection, project_id: str, ids: Sequence[str]) -> dict[str, DocumentState]:
    rows = await conn.execute(
        select(
            documents.c.id,
            documents.c.status,
            documents.c.error,
            documents.c.llm_prompt_tokens,
            documents.c.llm_completion_tokens,
            documents.c.llm_calls,
            documents.c.embedding_tokens,
        ).where(documents.c.project_id == project_id, documents.c.id.in_(list(ids)))
    )
    return {r["id"]: DocumentState.from_row(r) for r in rows.mappings()}


async def in_flight(conn: AsyncConnection, project_id: str) -> list[InFlightDocument]:
    rows = await conn.execute(
        select(
            documents.c.id,
            documents.c.file_path,
            documents.c.claimed_by,
            documents.c.heartbeat_at,
            documents.c.started_at,
            documents.c.attempts,
            documents.c.stage,
            documents.c.progress,
            documents.c.cancel_requested,
        )
        .where(documents.c.project_id == project_id, documents.c.status == "processing")
        .order_by(documents.c.started_at)
    )
    return [InFlightDocument.from_row(r) for r in rows.mappings()]


# The claim `worker_id` still holds on a processing document, its row locked; also read by
# resolution_reads.decision_reading, in the statement that reads what the merge decides on.
HELD_CLAIM_SQL = """SELECT d.id, d.graph_merged, d.cancel_requested FROM documents d
 WHERE d.project_id = :project_id AND d.id = :document_id AND d.status = 'processing'
   AND d.claimed_by = :worker_id
   FOR UPDATE"""
_HELD_CLAIM = text(HELD_CLAIM_SQL)


async def lock_claim(conn: AsyncConnection, project_id: str, document_id: str, worker_id: str) -> HeldClaim | None:
    """Inside a transaction: lock the document row if `worker_id` still holds its claim."""
    params = {"project_id": project_id, "document_id": document_id, "worker_id": worker_id}
    row = (await conn.execute(_HELD_CLAIM, params)).mappings().first()
    return HeldClaim.from_row(row) if row else None


async def set_fields(conn: AsyncConnection, project_id: str, document_id: str, **values: Any) -> None:
    await conn.execute(
        update(documents)
        .where(documents.c.project_id == project_id, documents.c.id == document_id)
        .values(updated_at=func.now(), **values)
    )


async def finish(
    conn: AsyncConnection,
    project_id: str,
    document_id: str,
    worker_id: str,
    status: str,
    error: str | None,
    usage: Usage,
    progress: dict | None = None,
    stage: str | None = None,
) -> bool:
    """Final status plus the token usage of this attempt, only while the claim is still ours.

    `claimed_by` stays set: on a finished document it names the worker that finished it. Processed, it owes
    no resolution review (its attempt did it); otherwise one owed stays for a worker's sweep (owed_reviews.py)."""
    c = documents.c
    result = await conn.execute(
        update(documents)
        .where(c.project_id == project_id, c.id == document_id, c.claimed_by == worker_id, c.status == "processing")
        .values(
            status=status,
            error=error,
            finished_at=func.now(),
            updated_at=func.now(),
            **({"progress": progress} if progress is not None else {}),
            **({"stage": stage} if stage is not None else {}),
            **({"review_owed": False, "review_taken_at": None} if status == "processed" else {}),
            llm_prompt_tokens=c.llm_prompt_tokens + usage.prompt_tokens,
            llm_completion_tokens=c.llm_completion_tokens + usage.completion_tokens,
            llm_calls=c.llm_calls + usage.llm_calls,
            embedding_tokens=c.embedding_tokens + usage.embedding_tokens,
        )
    )
    return bool(result.rowcount)


UNEMBEDDED_SHOWN = 3  # refused inputs named in the report's warning (the count covers them all)


async def set_unembedded(conn: AsyncConnection, project_id: str, document_id: str, refused: Sequence[str]) -> None:
    """Record on the document's extraction report the inputs (chunks, entities, relations) the embedding endpoint
    refused in this attempt: none clears what an earlier attempt recorded."""
    warning = None
    if refused:
        shown = "; ".join(refused[:UNEMBEDDED_SHOWN]) + ("; …" if len(refused) > UNEMBEDDED_SHOWN else "")
        warning = (
            f"{len(refused)} inputs were refused by the embedding endpoint and have no current vector "
            f"(full-text search still finds them; edit or retry to embed them again): {shown}"
        )
    c = documents.c
    note = literal({"unembedded_items": len(refused), "embedding_warning": warning}, type_=JSONB)
    await conn.execute(
        update(documents)
        .where(c.project_id == project_id, c.id == document_id, c.extraction_report.is_not(None))
        .values(extraction_report=c.extraction_report.op("||")(note))
    )


async def set_judge_unasked(conn: AsyncConnection, project_id: str, document_id: str, unasked: int) -> None:
    """Record on the document's extraction report how many judge candidates were over the per-document cap (kept
    as duplicate suggestions: services/ingest/resolution_judge.py); the report of each attempt starts at 0."""
    c = documents.c
    note = literal({"judge_pairs_unasked": unasked}, type_=JSONB)
    await conn.execute(
        update(documents)
        .where(c.project_id == project_id, c.id == document_id, c.extraction_report.is_not(None))
        .values(extraction_report=c.extraction_report.op("||")(note))
    )


RETRYABLE = ("failed", "cancelled")


async def retry(
    conn: AsyncConnection, project_id: str, document_id: str | None = None, statuses: Sequence[str] = RETRYABLE
) -> list[str]:
    """failed or cancelled → pending with a fresh attempt budget: one document, or (no id) all of the
    project's documents in `statuses`. Returns the ids requeued."""
    c = documents.c
    where = [c.project_id == project_id, c.status.in_(list(statuses))]
    if document_id is not None:
        where.append(c.id == document_id)
    result = await conn.execute(
        update(documents)
        .where(*where)
        .values(
            status="pending",
            error=None,
            attempts=0,
            claimed_by=None,
            finished_at=None,
            stage=None,
            progress=None,
            cancel_requested=False,
            updated_at=func.now(),
        )
        .returning(c.id)
    )
    return sorted(r[0] for r in result)


async def set_progress(
    conn: AsyncConnection, project_id: str, document_id: str, worker_id: str, stage: str, progress: dict
) -> bool | None:
    """Write a processing document's stage and figures while the claim is ours; returns whether its
    cancellation was asked (None: the claim is no longer ours)."""
    c = documents.c
    row = (
        await conn.execute(
            update(documents)
            .where(c.project_id == project_id, c.id == document_id, c.claimed_by == worker_id, c.status == "processing")
            .values(stage=stage, progress=progress)
            .returning(c.cancel_requested)
        )
    ).first()
    return None if row is None else bool(row[0])


async def request_cancel(conn: AsyncConnection, project_id: str, document_id: str) -> CancelTarget | None:
    """Cancel a pending document at once, or ask the worker of a processing one (not yet merged) to stop.
    Locks the row, so it is ordered with the merge transaction (which locks it too). Returns the row as it
    was (status, graph_merged), or None if there is no such document."""
    c = documents.c
    row = (
        (
            await conn.execute(
                select(c.status, c.graph_merged, c.file_path)
                .where(c.project_id == project_id, c.id == document_id)
                .with_for_update()
            )
        )
        .mappings()
        .first()
    )
    if row is None:
        return None
    where = [c.project_id == project_id, c.id == document_id]
    if row["status"] == "pending":
        await conn.execute(
            update(documents)
            .where(*where)
            .values(status="cancelled", error="cancelled on request", finished_at=func.now(), updated_at=func.now())
        )
    elif row["status"] == "processing" and not row["graph_merged"]:
        await conn.execute(update(documents).where(*where).values(cancel_requested=True, updated_at=func.now()))
    return CancelTarget.from_row(row)


async def queue_depth(conn: AsyncConnection, projects: set[str] | None = None) -> int:
    """Pending + processing documents of every project, or of `projects` only."""
    query = select(func.count()).select_from(documents).where(documents.c.status.in_(("pending", "processing")))
    if projects is not None:
        query = query.where(documents.c.project_id.in_(sorted(projects)))
    return int(await conn.scalar(query) or 0)
