"""Queue workers: stale claims retaken, attempts capped, graceful shutdown, start-up resume, and two real
worker processes sharing one database without doing any document twice."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import func, insert, select, update

from app.db.tables import chunks, documents, entity_sources, relation_sources
from app.domain.names import entity_key, normalize_name
from app.services.ingest.intake import IngestionService, content_hash
from tests.support.fakes.openai_server import names_in, sentences

ROOT = Path(__file__).resolve().parents[2]


async def _add_docs(app, texts: list[str], **values) -> list[str]:
    ids = []
    async with app.container.db.transaction() as conn:
        for text in texts:
            doc_id = f"doc-{content_hash(text)}"
            ids.append(doc_id)
            await conn.execute(
                insert(documents).values(
                    project_id="default",
                    id=doc_id,
                    content=text,
                    content_hash=content_hash(text),
                    content_length=len(text),
                    **values,
                )
            )
    return ids


async def _docs(app) -> list[dict]:
    async with app.container.db.connect() as conn:
        return [dict(r) for r in (await conn.execute(select(documents).order_by(documents.c.id))).mappings()]


async def _until(predicate, limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while not await predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.05)


async def test_stale_claim_is_retaken(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(worker_enabled=False))
    [doc_id] = await _add_docs(
        app,
        ["Anna met Boris."],
        status="processing",
        claimed_by="dead-worker",
        attempts=1,
        heartbeat_at=func.now() - func.make_interval(0, 0, 0, 0, 1),
    )
    worker_app = await start_app(make_settings(worker_claim_timeout=60))
    done, states = await IngestionService(worker_app.container).wait_until_done("default", [doc_id], limit=30)
    assert done and states[doc_id].status == "processed"
    [doc] = await _docs(app)
    assert doc["attempts"] == 2 and doc["claimed_by"] == worker_app.container.worker.id


async def test_fresh_claim_of_another_worker_is_left_alone(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(worker_enabled=False))
    await _add_docs(
        app, ["Carl met Dora."], status="processing", claimed_by="live-worker", attempts=1, heartbeat_at=func.now()
    )
    [pending] = await _add_docs(app, ["Emil met Fay."])
    worker_app = await start_app(make_settings())
    done, _ = await IngestionService(worker_app.container).wait_until_done("default", [pending], limit=30)
    assert done
    statuses = {d["content"]: (d["status"], d["claimed_by"]) for d in await _docs(app)}
    assert statuses["Carl met Dora."] == ("processing", "live-worker")


async def test_abandoned_after_max_attempts_becomes_failed(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(worker_enabled=False))
    await _add_docs(
        app,
        ["Gus met Hal."],
        status="processing",
        claimed_by="dead",
        attempts=3,
        heartbeat_at=func.now() - func.make_interval(0, 0, 0, 0, 1),
    )
    await start_app(make_settings(worker_max_attempts=3, worker_claim_timeout=1, worker_heartbeat_interval=0.05))

    async def failed() -> bool:
        return (await _docs(app))[0]["status"] == "failed"

    await _until(failed)
    doc = (await _docs(app))[0]
    assert "abandoned" in doc["error"] and fake_llm.calls == []


async def test_graceful_shutdown_returns_in_flight_documents(make_settings, start_app, fake_llm):
    fake_llm.latency = 30  # the document stays in extraction until the worker stops
    app = await start_app(make_settings())
    response = await app.http.post("/documents", json={"documents": [{"text": "Ida met Jon."}]})
    doc_id = response.json()["documents"][0]["id"]

    async def processing() -> bool:
        return (await _docs(app))[0]["status"] == "processing"

    await _until(processing)
    worker = app.container.worker
    assert worker.in_flight == [("default", doc_id)]
    await worker.stop()
    [doc] = await _docs(app)
    assert (doc["status"], doc["claimed_by"], doc["attempts"]) == ("pending", None, 0)
    async with app.container.db.connect() as conn:
        assert await conn.scalar(select(func.count()).select_from(entity_sources)) == 0


async def test_startup_resumes_pending_work(make_settings, start_app, fake_llm):
    idle = await start_app(make_settings(worker_enabled=False))
    ids = await _add_docs(idle, ["Kim met Lou.", "Max met Ned."])
    app = await start_app(make_settings())
    done, states = await IngestionService(app.container).wait_until_done("default", ids, limit=30)
    assert done and {s.status for s in states.values()} == {"processed"}


def _spawn_worker(database_url: str, fake_url: str, log: Path) -> subprocess.Popen:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "LLM_BASE_URL": fake_url,
        "LLM_MODEL": "fake-llm",
        "LLM_API_KEY": "k",
        "EMBEDDING_MODEL": "fake-embedding",
        "EMBEDDING_DIM": "64",
        "WORKER_POLL_INTERVAL": "0.05",
        "MAX_PARALLEL_INSERT": "2",
        "LOG_LEVEL": "INFO",
    }
    with log.open("wb") as sink:
        return subprocess.Popen(
            [sys.executable, "-m", "app.worker"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=sink
        )


@pytest.mark.slow  # worker processes
async def test_two_worker_processes_share_a_batch(make_settings, start_app, fake_llm, database_url, tmp_path):
    app = await start_app(make_settings(worker_enabled=False))
    fake_llm.latency = 0.05
    logs = [tmp_path / f"worker{i}.log" for i in range(2)]
    procs = [_spawn_worker(database_url, fake_llm.url, log) for log in logs]
    try:

        async def started() -> bool:
            return all("started" in log.read_text(errors="replace") for log in logs)

        await _until(started, limit=60)  # both claim loops run before any work exists
        texts = [f"Olga met Pete at event {i}. Pete told Quincy about Rosa {i}." for i in range(12)]
        ids = await _add_docs(app, texts)

        async def all_done() -> bool:
            return all(d["status"] in ("processed", "failed") for d in await _docs(app))

        await _until(all_done, limit=90)
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            proc.wait(timeout=30)
    assert [p.returncode for p in procs] == [0, 0], [log.read_text()[-2000:] for log in logs]

    docs = await _docs(app)
    assert {d["status"] for d in docs} == {"processed"}
    assert all(d["attempts"] == 1 for d in docs)  # every document claimed exactly once
    assert len({d["claimed_by"] for d in docs}) == 2  # and both processes took part
    extract_chunks = [c for c in fake_llm.calls_of("extract")]
    assert len(extract_chunks) == len(ids)  # one chunk each, extracted once
    assert sum(d["llm_calls"] for d in docs) == len(fake_llm.calls)

    async with app.container.db.connect() as conn:
        chunk_rows = (await conn.execute(select(chunks.c.id, chunks.c.content))).all()
        got = {
            (r[0], r[1])
            for r in (await conn.execute(select(entity_sources.c.chunk_id, entity_sources.c.entity_key))).all()
        }
        rel_count = await conn.scalar(select(func.count()).select_from(relation_sources))
    expected = {
        (cid, entity_key(normalize_name(n)))
        for cid, content in chunk_rows
        for s in sentences(content)
        for n in names_in(s)
    }
    assert got == expected  # no lost and no extra provenance
    assert rel_count == 3 * len(ids)
    assert len(chunk_rows) == len(ids)


async def test_retry_of_document_whose_claim_was_lost_does_not_double_merge(make_settings, start_app, fake_llm):
    app = await start_app(make_settings())
    [doc] = (await app.http.post("/documents", json={"documents": [{"text": "Sven met Tina."}], "wait": True})).json()[
        "documents"
    ]
    async with app.container.db.transaction() as conn:  # pretend a second attempt after a crash post-merge
        await conn.execute(update(documents).values(status="pending", attempts=1))
    app.container.worker.notify()
    done, _ = await IngestionService(app.container).wait_until_done("default", [doc["id"]], limit=30)
    assert done
    async with app.container.db.connect() as conn:
        assert await conn.scalar(select(func.count()).select_from(entity_sources)) == 2
        assert await conn.scalar(select(func.count()).select_from(relation_sources)) == 1
