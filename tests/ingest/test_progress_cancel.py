"""Operations on the queue: each document's visible progress (stage, chunks, LLM calls and tokens), written in
batches; recent pipeline events; cancelling a pending or processing document (nothing merged, cached
extractions kept, then retried or deleted); retrying every failed document; clearing the query cache."""

from __future__ import annotations

import asyncio
import time

import pytest
from sqlalchemy import func, select, update

from app.db.tables import documents, entities, entity_sources, llm_cache
from app.repositories import document_claims as claims_repo
from app.repositories import documents as docs_repo
from app.services.ingest.intake import IngestionService
from app.services.ingest.pipeline import DocumentPipeline
from app.services.ingest.progress import Progress

PARAGRAPHS = {"chunk_split_by_character": "\n\n", "chunk_split_by_character_only": True}
STORY = "\n\n".join(f"Person{i} met Helper{i} in Town{i}." for i in range(4))


async def scalar(app, query):
    async with app.container.db.connect() as conn:
        return await conn.scalar(query)


async def make_app(start_app, make_settings, **overrides):
    app = await start_app(make_settings(**overrides))
    assert (await app.http.post("/projects", json={"id": "p", "settings": PARAGRAPHS})).status_code == 201
    return app


async def enqueue(app, text: str, project_id: str = "p", wait: bool = False) -> str:
    response = await app.http.post(
        "/documents", json={"project_id": project_id, "documents": [{"text": text}], "wait": wait}
    )
    assert response.status_code in (200, 202), response.text
    return response.json()["documents"][0]["id"]


async def until_document(app, doc_id: str, condition, within: float = 30.0, project_id: str = "p") -> dict:
    deadline = time.monotonic() + within
    while True:
        doc = (await app.http.get(f"/documents/{doc_id}", params={"project_id": project_id})).json()
        if condition(doc):
            return doc
        assert time.monotonic() < deadline, f"document never reached the condition: {doc}"
        await asyncio.sleep(0.02)


async def test_processed_document_shows_stage_chunks_calls_tokens_and_events(start_app, make_settings, fake_llm):
    app = await make_app(start_app, make_settings)
    fake_llm.fixed_usage = (7, 3)
    doc_id = await enqueue(app, STORY, wait=True)
    doc = (await app.http.get(f"/documents/{doc_id}", params={"project_id": "p"})).json()
    assert doc["status"] == "processed" and doc["stage"] == "embedding" and not doc["cancel_requested"]
    calls = doc["llm_calls"]
    assert doc["progress"] == {
        "chunks_total": 4,
        "chunks_done": 4,
        "llm_calls": calls,
        "llm_prompt_tokens": 7 * calls,
        "llm_completion_tokens": 3 * calls,
        "embedding_tokens": doc["embedding_tokens"],
    }
    assert doc["started_at"] and doc["finished_at"]
    listed = (await app.http.get("/documents", params={"project_id": "p"})).json()["documents"][0]
    assert listed["stage"] == "embedding" and listed["progress"]["chunks_done"] == 4

    pipeline = (await app.http.get("/pipeline", params={"project_id": "p"})).json()
    assert [(e["document_id"], e["kind"]) for e in pipeline["recent_events"]] == [
        (doc_id, "started"),
        (doc_id, "finished"),
    ]
    assert "attempt 1" in pipeline["recent_events"][0]["detail"]
    assert (await app.http.get("/pipeline")).json()["recent_events"] == []  # scoped per project


async def test_progress_is_written_at_most_once_per_interval(start_app, make_settings, fake_llm, monkeypatch):
    app = await make_app(start_app, make_settings, progress_write_interval=0.5)
    writes: list[tuple[str, dict]] = []
    original = docs_repo.set_progress

    async def counted(conn, project_id, document_id, worker_id, stage, progress):
        writes.append((stage, dict(progress)))
        return await original(conn, project_id, document_id, worker_id, stage, progress)

    monkeypatch.setattr(docs_repo, "set_progress", counted)
    fake_llm.latency = 0.01
    text = "\n\n".join(f"Name{i} visited Place{i}." for i in range(40))
    started = time.monotonic()
    await enqueue(app, text, wait=True)
    elapsed = time.monotonic() - started
    # 40 chunks, 80 LLM calls and five stages, but one write per interval (plus the first one)
    assert len(writes) <= 2 + elapsed / 0.5, (len(writes), elapsed)
    assert len(writes) < 40
    assert writes[0][0] == "chunking"
    done = [p["chunks_done"] for _, p in writes]
    assert done == sorted(done)


async def test_failure_reason_names_the_stage_and_what_to_do(start_app, make_settings, fake_llm):
    app = await make_app(start_app, make_settings)
    fake_llm.fail_next(20, status=500, operation="extract")
    doc_id = await enqueue(app, "Ann met Ben.", wait=True)
    doc = (await app.http.get(f"/documents/{doc_id}", params={"project_id": "p"})).json()
    assert doc["status"] == "failed" and doc["stage"] == "extracting"
    assert doc["error"].startswith("ProviderError") and "while extracting" in doc["error"]
    assert "then retry" in doc["error"]
    kinds = [e["kind"] for e in (await app.http.get("/pipeline", params={"project_id": "p"})).json()["recent_events"]]
    assert kinds == ["started", "failed"]


async def test_cancel_pending_then_retry_or_delete(start_app, make_settings, fake_llm):
    app = await make_app(start_app, make_settings, worker_enabled=False)
    doc_id = await enqueue(app, "Cara met Dan.")
    response = await app.http.post(f"/documents/{doc_id}/cancel", json={"project_id": "p"})
    assert response.status_code == 200
    assert response.json() == {"id": doc_id, "status": "cancelled", "cancel_requested": False}
    doc = (await app.http.get(f"/documents/{doc_id}", params={"project_id": "p"})).json()
    assert doc["status"] == "cancelled" and doc["finished_at"]
    counts = (await app.http.get("/documents", params={"project_id": "p"})).json()["counts"]
    assert counts["cancelled"] == 1 and counts["pending"] == 0

    again = await app.http.post(f"/documents/{doc_id}/cancel", json={"project_id": "p"})
    assert again.status_code == 409 and again.json()["code"] == "document_not_cancellable"

    retried = await app.http.post(f"/documents/{doc_id}/retry", json={"project_id": "p"})
    assert retried.status_code == 200 and retried.json()["status"] == "pending"
    assert (await app.http.post(f"/documents/{doc_id}/cancel", json={"project_id": "p"})).status_code == 200
    deleted = await app.http.delete(f"/documents/{doc_id}", params={"project_id": "p"})
    assert deleted.status_code == 200, deleted.text
    kinds = [e["kind"] for e in (await app.http.get("/pipeline", params={"project_id": "p"})).json()["recent_events"]]
    assert kinds == ["cancelled", "retried", "cancelled"]
    assert fake_llm.calls == []


async def test_cancel_unknown_or_merged_document(start_app, make_settings, fake_llm):
    app = await make_app(start_app, make_settings, worker_enabled=False)
    missing = await app.http.post("/documents/nope/cancel", json={"project_id": "p"})
    assert missing.status_code == 404 and missing.json()["code"] == "document_not_found"
    doc_id = await enqueue(app, "Eve met Fay.")
    async with app.container.db.transaction() as conn:  # a worker has merged it and is finalising
        await conn.execute(
            update(documents)
            .where(documents.c.id == doc_id)
            .values(status="processing", graph_merged=True, claimed_by="w")
        )
    merged = await app.http.post(f"/documents/{doc_id}/cancel", json={"project_id": "p"})
    assert merged.status_code == 409 and merged.json()["code"] == "document_merged"
    assert "cannot be undone" in merged.json()["detail"]
    assert not await scalar(app, select(documents.c.cancel_requested).where(documents.c.id == doc_id))


async def test_cancel_while_extracting_merges_nothing_and_keeps_cached_answers(start_app, make_settings, fake_llm):
    app = await make_app(start_app, make_settings, llm_max_async=1, progress_write_interval=0.05)
    fake_llm.latency = 0.3
    doc_id = await enqueue(app, STORY)
    await until_document(app, doc_id, lambda d: (d["progress"] or {}).get("chunks_done", 0) >= 1)
    response = await app.http.post(f"/documents/{doc_id}/cancel", json={"project_id": "p"})
    assert response.status_code == 202
    assert response.json() == {"id": doc_id, "status": "processing", "cancel_requested": True}
    doc = await until_document(app, doc_id, lambda d: d["status"] != "processing", within=10)
    assert doc["status"] == "cancelled" and doc["error"] == "cancelled on request"
    assert doc["progress"]["chunks_done"] < 4  # it stopped mid-extraction instead of finishing the chunks
    assert await scalar(app, select(func.count()).select_from(entities)) == 0
    assert await scalar(app, select(func.count()).select_from(entity_sources)) == 0
    assert not await scalar(app, select(documents.c.graph_merged).where(documents.c.id == doc_id))
    kept = await scalar(app, select(func.count()).select_from(llm_cache).where(llm_cache.c.cache_type == "extract"))
    assert kept >= 1

    fake_llm.latency = 0
    fake_llm.calls.clear()
    assert (await app.http.post(f"/documents/{doc_id}/retry", json={"project_id": "p"})).status_code == 200
    doc = await until_document(app, doc_id, lambda d: d["status"] == "processed")
    assert len(fake_llm.calls_of("extract")) < 4  # the chunks extracted before the cancel were not asked again
    assert await scalar(app, select(func.count()).select_from(entities)) > 0
    kinds = [e["kind"] for e in (await app.http.get("/pipeline", params={"project_id": "p"})).json()["recent_events"]]
    assert kinds == ["started", "cancelled", "retried", "started", "finished"]


async def test_merge_refuses_a_cancelled_document_the_worker_never_heard_of(
    start_app, make_settings, fake_llm, monkeypatch
):
    """The last check is under the merge transaction's row lock: no notification is needed."""
    app = await make_app(start_app, make_settings, worker_enabled=False)
    doc_id = await enqueue(app, "Gus met Hal in Ivy.")
    async with app.container.db.transaction() as conn:
        claimed = await claims_repo.claim_next(conn, "w1", 120, 3)
        await conn.execute(update(documents).where(documents.c.id == doc_id).values(cancel_requested=True))
    assert claimed.id == doc_id

    async def deaf(self) -> None:  # progress writes would notice the flag: make them miss it
        return None

    monkeypatch.setattr(Progress, "write", deaf)
    status = await DocumentPipeline(app.container).process("p", doc_id, "w1")
    assert status == "cancelled"
    assert fake_llm.calls_of("extract")  # it got as far as extracting
    assert await scalar(app, select(func.count()).select_from(entities)) == 0
    doc = (await app.http.get(f"/documents/{doc_id}", params={"project_id": "p"})).json()
    assert doc["status"] == "cancelled" and doc["stage"] == "merging"


async def test_retry_failed_requeues_every_failed_document_of_the_project(start_app, make_settings, fake_llm):
    app = await make_app(start_app, make_settings)
    fake_llm.fail_next(100, status=500, operation="extract")
    failed = sorted([await enqueue(app, "Jon met Kim.", wait=True), await enqueue(app, "Lea met Max.", wait=True)])
    fake_llm.reset()
    ok = await enqueue(app, "Ned met Ola.", wait=True)
    other = await enqueue(app, "Pat met Quinn.", project_id="default", wait=True)
    assert (await app.http.get(f"/documents/{ok}", params={"project_id": "p"})).json()["status"] == "processed"
    async with app.container.db.transaction() as conn:
        await conn.execute(update(documents).where(documents.c.id == other).values(status="failed"))

    response = await app.http.post("/documents/retry-failed", json={"project_id": "p"})
    assert response.status_code == 200
    assert response.json() == {"project_id": "p", "document_ids": failed}
    done, states = await IngestionService(app.container).wait_until_done("p", failed, limit=30)
    assert done and {s.status for s in states.values()} == {"processed"}
    default_doc = (await app.http.get(f"/documents/{other}")).json()
    assert default_doc["status"] == "failed"  # another project's failures stay
    nothing = await app.http.post("/documents/retry-failed", json={"project_id": "p"})
    assert nothing.json()["document_ids"] == []
    unknown = await app.http.post("/documents/retry-failed", json={"project_id": "ghost"})
    assert unknown.status_code == 404


async def test_clear_query_cache_keeps_extraction_and_summary_caches(start_app, make_settings, fake_llm):
    app = await make_app(start_app, make_settings)
    await enqueue(app, "Rob met Sue in Turin.", project_id="default", wait=True)
    answered = await app.http.post("/query", json={"query": "Where did Rob meet Sue?", "mode": "local"})
    assert answered.status_code == 200

    async def by_type() -> dict[str, int]:
        async with app.container.db.connect() as conn:
            rows = await conn.execute(select(llm_cache.c.cache_type, func.count()).group_by(llm_cache.c.cache_type))
            return dict(rows.all())

    before = await by_type()
    assert before.get("keywords") and before.get("query") and before.get("extract")
    response = await app.http.delete("/projects/default/cache", params={"kind": "query"})
    assert response.status_code == 200
    assert response.json() == {
        "project_id": "default",
        "kind": "query",
        "deleted": before["keywords"] + before["query"],
    }
    after = await by_type()
    assert "keywords" not in after and "query" not in after and after["extract"] == before["extract"]

    fake_llm.calls.clear()
    again = await app.http.post("/query", json={"query": "Where did Rob meet Sue?", "mode": "local"})
    assert again.status_code == 200 and fake_llm.calls_of("query")  # answered afresh
    assert (await app.http.delete("/projects/default/cache", params={"kind": "extract"})).status_code == 422
    assert (await app.http.delete("/projects/ghost/cache")).status_code == 404


@pytest.mark.parametrize("path", ["/documents/retry-failed", "/documents/x/cancel"])
async def test_control_routes_refuse_unknown_fields(start_app, make_settings, fake_llm, path):
    app = await make_app(start_app, make_settings, worker_enabled=False)
    response = await app.http.post(path, json={"project_id": "p", "surprise": 1})
    assert response.status_code == 422


async def test_a_claimed_document_is_at_the_first_stage_from_its_claim_on(start_app, make_settings, fake_llm):
    """No progress reader sees a processing document without a stage (between the claim and the first write)."""
    from app.services.ingest.progress import STAGES

    app = await make_app(start_app, make_settings, worker_enabled=False)
    doc_id = await enqueue(app, "Ria met Sol in Tam.")
    async with app.container.db.transaction() as conn:
        claimed = await claims_repo.claim_next(conn, "w1", 120, 3)
    assert claimed.id == doc_id
    doc = (await app.http.get(f"/documents/{doc_id}", params={"project_id": "p"})).json()
    assert doc["status"] == "processing" and doc["stage"] == STAGES[0]
    in_flight = (await app.http.get("/pipeline", params={"project_id": "p"})).json()
    assert [(d["id"], d["stage"]) for d in in_flight["in_flight"]] == [(doc_id, STAGES[0])]
    assert in_flight["in_flight"][0]["file_path"] == doc["file_path"]  # people read names, not ids
