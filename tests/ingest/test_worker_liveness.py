"""Dead worker detection: a worker that stops heartbeating loses its claims after ~3 of its heartbeat
intervals (not WORKER_CLAIM_TIMEOUT), while a live worker keeps its claims however slow its documents are."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import func, insert, select, text, update

from app.db.tables import documents, workers
from app.domain.document_rows import Claim
from app.repositories import document_claims as claims_repo
from app.repositories import workers as workers_repo
from tests.ingest.test_worker_kill import _add, _started
from tests.support.faults import TEXTS, document_rows, until

INTERVAL = 0.5  # WORKER_HEARTBEAT_INTERVAL of the worker processes below
ROOT = Path(__file__).resolve().parents[2]


def _spawn(database_url: str, fake_url: str, log: Path) -> subprocess.Popen:
    """A worker process heartbeating every INTERVAL, with the default 120 s claim timeout."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "LLM_BASE_URL": fake_url,
        "LLM_MODEL": "fake-llm",
        "LLM_API_KEY": "k",
        "EMBEDDING_MODEL": "fake-embedding",
        "EMBEDDING_DIM": "64",
        "LOG_LEVEL": "INFO",
        "WORKER_POLL_INTERVAL": "0.05",
        "WORKER_CLAIM_TIMEOUT": "120",
        "WORKER_HEARTBEAT_INTERVAL": str(INTERVAL),
        "WORKER_PORT": "0",
        "API_KEYS": "",
    }
    with log.open("wb") as sink:
        return subprocess.Popen(
            [sys.executable, "-m", "app.worker"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=sink
        )


async def _claimed(db, doc_id: str, worker_id: str, heartbeat_age: float, attempts: int = 1) -> None:
    """The document as a worker holding it leaves it: processing, heartbeated `heartbeat_age` seconds ago."""
    async with db.transaction() as conn:
        await conn.execute(
            update(documents)
            .where(documents.c.id == doc_id)
            .values(
                status="processing",
                claimed_by=worker_id,
                attempts=attempts,
                heartbeat_at=func.now() - text(f"interval '{heartbeat_age} seconds'"),
            )
        )


async def _worker_row(db, worker_id: str, interval: float, last_seen_age: float) -> None:
    async with db.transaction() as conn:
        await conn.execute(
            insert(workers).values(
                id=worker_id,
                heartbeat_interval=interval,
                last_seen=func.now() - text(f"interval '{last_seen_age} seconds'"),
            )
        )


async def _claim(db, worker_id: str, max_attempts: int = 3) -> Claim | None:
    async with db.transaction() as conn:
        return await claims_repo.claim_next(conn, worker_id, 120.0, max_attempts)


async def test_claims_of_a_dead_worker_are_retaken_and_a_live_ones_are_not(make_settings, start_app):
    app = await start_app(make_settings(worker_enabled=False))
    db = app.container.db
    live_doc, dead_doc = await _add(app, "default", TEXTS[0]), await _add(app, "default", TEXTS[1])
    await _worker_row(db, "live", 1.0, last_seen_age=2.5)  # missed two heartbeats: still alive
    await _worker_row(db, "dead", 1.0, last_seen_age=3.5)  # missed three
    await _claimed(db, live_doc, "live", heartbeat_age=2.5)
    await _claimed(db, dead_doc, "dead", heartbeat_age=3.5)  # both far within the 120 s claim timeout

    taken = await _claim(db, "other")
    assert taken is not None and (taken.id, taken.attempts) == (dead_doc, 2)
    assert await _claim(db, "other") is None
    assert (await document_rows(db, "default"))[live_doc]["claimed_by"] == "live"


async def test_unknown_worker_falls_back_to_the_claim_timeout(make_settings, start_app):
    app = await start_app(make_settings(worker_enabled=False))
    db = app.container.db
    doc = await _add(app, "default", TEXTS[0])
    await _claimed(db, doc, "older-version-worker", heartbeat_age=60)
    assert await _claim(db, "other") is None
    await _claimed(db, doc, "older-version-worker", heartbeat_age=121)
    assert (await _claim(db, "other")).id == doc


async def test_dead_worker_with_no_attempts_left_fails_its_document(make_settings, start_app):
    app = await start_app(make_settings(worker_enabled=False))
    db = app.container.db
    doc = await _add(app, "default", TEXTS[0])
    await _worker_row(db, "dead", 0.2, last_seen_age=1.0)
    await _claimed(db, doc, "dead", heartbeat_age=1.0, attempts=3)
    assert await _claim(db, "other", max_attempts=3) is None
    async with db.transaction() as conn:
        ended = await claims_repo.fail_abandoned(conn, "other", 120.0, 3)
    assert [(r.id, r.status) for r in ended] == [(doc, "failed")]


async def test_a_worker_whose_beats_run_late_keeps_its_own_claims(make_settings, start_app):
    """On a starved machine a live worker's liveness row can look dead to itself: it must not retake a document
    it is still processing (a third attempt) nor end it as abandoned; any other worker still treats it as dead."""
    app = await start_app(make_settings(worker_enabled=False))
    db = app.container.db
    busy, last = await _add(app, "default", TEXTS[0]), await _add(app, "default", TEXTS[1])
    await _worker_row(db, "late", 0.5, last_seen_age=2.0)  # four beats missed, as seen from the database
    await _claimed(db, busy, "late", heartbeat_age=2.0, attempts=2)
    await _claimed(db, last, "late", heartbeat_age=2.0, attempts=3)

    assert await _claim(db, "late") is None
    async with db.transaction() as conn:
        assert await claims_repo.fail_abandoned(conn, "late", 120.0, 3) == []
    rows = await document_rows(db, "default")
    assert [(rows[d]["status"], rows[d]["claimed_by"], rows[d]["attempts"]) for d in (busy, last)] == [
        ("processing", "late", 2),
        ("processing", "late", 3),
    ]

    taken = await _claim(db, "other")
    assert taken is not None and (taken.id, taken.attempts) == (busy, 3)
    async with db.transaction() as conn:
        ended = await claims_repo.fail_abandoned(conn, "other", 120.0, 3)
    assert [(r.id, r.status) for r in ended] == [(last, "failed")]


async def test_a_worker_retakes_its_own_document_once_the_claim_timeout_passed(make_settings, start_app):
    """Its task for the document ended without the final write (database down then): the claim goes stale by the
    document's own heartbeat, for the worker that held it too."""
    app = await start_app(make_settings(worker_enabled=False))
    db = app.container.db
    doc = await _add(app, "default", TEXTS[0])
    await _worker_row(db, "w", 0.5, last_seen_age=0)
    await _claimed(db, doc, "w", heartbeat_age=121)
    taken = await _claim(db, "w")
    assert taken is not None and (taken.id, taken.attempts) == (doc, 2)


async def test_stopped_workers_are_forgotten_and_old_rows_pruned(make_settings, start_app):
    app = await start_app(make_settings(worker_enabled=False))
    db = app.container.db
    await _worker_row(db, "gone", 1.0, last_seen_age=300)
    await _worker_row(db, "recent", 1.0, last_seen_age=5)
    async with db.transaction() as conn:
        await workers_repo.seen(conn, "fresh", 1.0)
        assert await workers_repo.live_count(conn) == 1
        assert await workers_repo.prune(conn, claim_timeout=120) == 1
        await workers_repo.forget(conn, "fresh")
        assert sorted(await conn.scalars(select(workers.c.id))) == ["recent"]


@pytest.mark.slow  # worker processes, one killed mid-document
async def test_killed_worker_is_detected_within_three_heartbeats(
    make_settings, start_app, fake_llm, database_url, tmp_path
):
    app = await start_app(make_settings(worker_enabled=False))
    db = app.container.db
    release = threading.Event()

    async def hanging(messages):  # a slow LLM: the call stays open until the test lets go
        await asyncio.to_thread(release.wait, 120)
        return "unused"

    fake_llm.handlers["extract"] = hanging
    first = _spawn(database_url, fake_llm.url, tmp_path / "first.log")
    second = None
    try:
        await _started(tmp_path / "first.log")
        doc_id = await _add(app, "default", TEXTS[0])

        async def extracting() -> bool:
            return fake_llm.in_flight > 0 and (await document_rows(db, "default"))[doc_id]["status"] == "processing"

        await until(extracting, limit=60)
        slow_owner = (await document_rows(db, "default"))[doc_id]["claimed_by"]
        second = _spawn(database_url, fake_llm.url, tmp_path / "second.log")
        await _started(tmp_path / "second.log")

        await asyncio.sleep(8 * INTERVAL)  # slow, but alive: its claim stays
        doc = (await document_rows(db, "default"))[doc_id]
        assert (doc["status"], doc["claimed_by"], doc["attempts"]) == ("processing", slow_owner, 1)

        first.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        first.wait(timeout=10)

        async def retaken() -> bool:
            return (await document_rows(db, "default"))[doc_id]["claimed_by"] != slow_owner

        await until(retaken, limit=30, pause=0.02)
        elapsed = time.monotonic() - killed_at
        print(f"retaken {elapsed:.2f} s after the kill (heartbeat interval {INTERVAL} s)")
        assert elapsed < 3 * INTERVAL + 1.5  # dead after 3 missed heartbeats, plus polling and a loaded machine
        release.set()

        async def finished() -> bool:
            return (await document_rows(db, "default"))[doc_id]["status"] in ("processed", "failed")

        await until(finished, limit=60)
        doc = (await document_rows(db, "default"))[doc_id]
        assert (doc["status"], doc["attempts"]) == ("processed", 2)
    finally:
        release.set()
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=30)
    async with db.connect() as conn:  # the stopped worker removed its row; the killed one could not
        assert list(await conn.scalars(select(workers.c.id))) == [slow_owner]


async def test_the_liveness_beat_starts_one_interval_after_the_registration(make_settings, start_app):
    """Worker.start records the worker itself; its beat thread connects only when the first beat is due, so a
    process stopping sooner (a CLI command, a short test) never opens that connection."""
    app = await start_app(make_settings(worker_heartbeat_interval=0.4))
    worker = app.container.worker
    db = app.container.db
    async with db.connect() as conn:
        registered = await conn.scalar(select(workers.c.last_seen).where(workers.c.id == worker.id))
    await asyncio.sleep(0.2)  # half an interval: long enough for a beat thread that connects at once
    assert registered is not None and worker._beat.beats == 0

    async def beaten() -> bool:
        return worker._beat.beats >= 1

    await until(beaten, limit=5)
    async with db.connect() as conn:
        assert await conn.scalar(select(workers.c.last_seen).where(workers.c.id == worker.id)) > registered
