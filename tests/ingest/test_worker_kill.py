"""A worker process killed with SIGKILL mid-document: its claim expires, another worker process finishes the
document, and the provenance equals a clean run of the same text (no duplicates, nothing lost)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from sqlalchemy import insert

from app.db.tables import documents
from app.services.ingest.intake import content_hash
from tests.support.fakes.openai_server import COMPLETE, TUPLE, default_extract
from tests.support.faults import TEXTS, document_rows, graph_counts, graph_rows, until

pytestmark = pytest.mark.slow  # worker processes killed mid-document

ROOT = Path(__file__).resolve().parents[2]


def _spawn(database_url: str, fake_url: str, log: Path) -> subprocess.Popen:
    env = {
        "FORCE_LLM_SUMMARY_ON_MERGE": "2",
        **os.environ,
        "DATABASE_URL": database_url,
        "LLM_BASE_URL": fake_url,
        "LLM_MODEL": "fake-llm",
        "LLM_API_KEY": "k",
        "EMBEDDING_MODEL": "fake-embedding",
        "EMBEDDING_DIM": "64",
        "LOG_LEVEL": "INFO",
        "WORKER_POLL_INTERVAL": "0.05",
        # a killed worker is found dead by its missed liveness beats (3 x 0.5 s); the claim timeout stays long,
        # so a live worker whose claim heartbeats run late on a loaded machine never retakes its own document
        "WORKER_CLAIM_TIMEOUT": "120",
        "WORKER_HEARTBEAT_INTERVAL": "0.5",
        "API_KEYS": "",
    }
    with log.open("wb") as sink:
        return subprocess.Popen(
            [sys.executable, "-m", "app.worker"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=sink
        )


def _extract_with_a_second_description(messages: list[dict]) -> str:
    """Bob Stone twice, so merging makes a summary call (FORCE_LLM_SUMMARY_ON_MERGE=2) after the merge."""
    extra = f"entity{TUPLE}Bob Stone{TUPLE}person{TUPLE}Bob Stone started a company.\n"
    return default_extract(messages).replace(COMPLETE, extra + COMPLETE)


async def _add(app, project_id: str, text: str) -> str:
    doc_id = f"doc-{content_hash(text)}"
    async with app.container.db.transaction() as conn:
        await conn.execute(
            insert(documents).values(
                project_id=project_id,
                id=doc_id,
                content=text,
                content_hash=content_hash(text),
                content_length=len(text),
            )
        )
    return doc_id


async def _started(log: Path) -> None:
    async def ready() -> bool:
        return "started" in await asyncio.to_thread(log.read_text, errors="replace")

    await until(ready, limit=60)


@pytest.mark.parametrize("stage", ["extraction", "after_merge"])
async def test_killed_worker_document_is_finished_by_another(
    stage, make_settings, start_app, fake_llm, database_url, tmp_path
):
    app = await start_app(make_settings(worker_enabled=False))
    assert (await app.http.post("/projects", json={"id": "clean"})).status_code == 201
    db = app.container.db
    release = threading.Event()

    async def hanging(messages):  # the call stays open until the test lets go
        await asyncio.to_thread(release.wait, 120)
        return "unused"

    fake_llm.handlers["extract"] = _extract_with_a_second_description
    # the worker dies inside the extraction call, or after its merge committed (in the summary call)
    fake_llm.handlers["extract" if stage == "extraction" else "summary"] = hanging
    first = _spawn(database_url, fake_llm.url, tmp_path / "first.log")
    second = None
    try:
        await _started(tmp_path / "first.log")
        doc_id = await _add(app, "default", TEXTS[0])

        async def at_stage() -> bool:
            doc = (await document_rows(db, "default")).get(doc_id)
            if doc is None or doc["status"] != "processing":
                return False
            return fake_llm.in_flight > 0 and (stage == "extraction" or doc["graph_merged"])

        await until(at_stage, limit=60)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        killed = (await document_rows(db, "default"))[doc_id]
        assert killed["status"] == "processing" and killed["attempts"] == 1
        merged_before = await graph_counts(db, "default")
        if stage == "extraction":
            assert merged_before["entity_sources"] == 0  # died before its merge: nothing of it is in the graph

        release.set()
        fake_llm.handlers.pop("summary", None)
        fake_llm.handlers["extract"] = _extract_with_a_second_description
        second = _spawn(database_url, fake_llm.url, tmp_path / "second.log")

        async def finished() -> bool:
            return (await document_rows(db, "default"))[doc_id]["status"] in ("processed", "failed")

        await until(finished, limit=60)
        doc = (await document_rows(db, "default"))[doc_id]
        assert doc["status"] == "processed" and doc["attempts"] == 2
        assert doc["claimed_by"] != killed["claimed_by"]

        clean_id = await _add(app, "clean", TEXTS[0])  # the same text once, undisturbed, for comparison

        async def clean_done() -> bool:
            return (await document_rows(db, "clean"))[clean_id]["status"] == "processed"

        await until(clean_done, limit=60)
    finally:
        release.set()
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=30)
    assert await graph_counts(db, "default") == await graph_counts(db, "clean")
    assert await graph_rows(db, "default") == await graph_rows(db, "clean")
    if stage == "after_merge":
        assert merged_before == await graph_counts(db, "clean")  # the merge was whole before the kill


async def test_sigterm_mid_document_hands_it_back(make_settings, start_app, fake_llm, database_url, tmp_path):
    """The polite counterpart: SIGTERM while extracting returns the document to the queue, untouched."""
    app = await start_app(make_settings(worker_enabled=False))
    release = threading.Event()

    async def hanging(messages):
        await asyncio.to_thread(release.wait, 120)
        return "unused"

    fake_llm.handlers["extract"] = hanging
    proc = _spawn(database_url, fake_llm.url, tmp_path / "worker.log")
    try:
        await _started(tmp_path / "worker.log")
        doc_id = await _add(app, "default", TEXTS[1])

        async def extracting() -> bool:
            return fake_llm.in_flight > 0

        await until(extracting, limit=60)
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(proc.wait, 30) == 0
    finally:
        release.set()
        if proc.poll() is None:
            proc.kill()
    doc = (await document_rows(app.container.db, "default"))[doc_id]
    assert (doc["status"], doc["claimed_by"], doc["attempts"]) == ("pending", None, 0)
    counts = await graph_counts(app.container.db, "default")
    assert counts["entity_sources"] == counts["relation_sources"] == 0
