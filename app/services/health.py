"""Readiness: database reachable, schema at the migration head, providers configured."""

from __future__ import annotations

import logging

from sqlalchemy import text

from app.container import Container
from app.core import metrics
from app.db.migrate import current_revision, head_revision
from app.repositories import documents as docs_repo

log = logging.getLogger(__name__)


async def health_report(c: Container) -> tuple[bool, dict]:
    report: dict = {
        "llm": {"configured": c.llm.configured, "model": c.settings.llm_model},
        "embedding": {
            "configured": c.embedder.configured,
            "model": c.settings.embedding_model,
            "dim": c.settings.embedding_dim,
        },
    }
    head = head_revision()
    try:
        async with c.db.connect(seen_by_client=False) as conn:
            await conn.execute(text("SELECT 1"))
            current = await current_revision(conn)
        report["database"] = "ok"
        report["migrations"] = {"current": current, "head": head, "ok": current == head}
    except Exception as exc:  # any failure to reach the DB means "not ready"
        log.warning("health: database unreachable: %s", type(exc).__name__)
        report["database"] = "unreachable"
        report["migrations"] = {"current": None, "head": head, "ok": False}
    if c.db.replicas is not None:  # informative only: a replica down sends its reads to the primary
        report["read_replicas"] = await c.db.replicas.probe()
    healthy = report["database"] == "ok" and report["migrations"]["ok"]
    report["status"] = "ok" if healthy else "unavailable"
    return healthy, report


async def refresh_pipeline_gauges(c: Container) -> None:
    """Set the queue-depth gauges from the database just before a scrape."""
    try:
        async with c.db.connect(seen_by_client=False) as conn:
            counts = await docs_repo.count_by_status(conn)
    except Exception as exc:
        log.warning("metrics: cannot read pipeline counts: %s", type(exc).__name__)
        return
    metrics.set_queue_gauges(counts)
    await c.budget.refresh_metrics()
