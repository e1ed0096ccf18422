"""Providers misbehaving on purpose: timeouts, 429, persistent 500, garbage, a stream cut mid-way, embeddings down.

Every document ends processed or failed with the reason; a failed one is retried after the fake recovers;
the graph then equals a clean run of the same texts in another project (nothing half-merged, no duplicate
provenance). Doc and chunk ids derive from the text, so provenance rows compare across projects.
"""

from __future__ import annotations

import json

import pytest

from app.core import metrics
from app.services.ingest.intake import IngestionService
from tests.support.faults import TEXTS, document_rows, graph_counts, graph_rows, until

EMPTY = {"entities": 0, "relations": 0, "entity_sources": 0, "relation_sources": 0}


async def _project(app, project_id: str) -> None:
    assert (await app.http.post("/projects", json={"id": project_id})).status_code == 201


async def _ingest(app, project_id: str, texts: list[str], wait: bool = True) -> list[dict]:
    body = {"project_id": project_id, "documents": [{"text": t} for t in texts], "wait": wait}
    response = await app.http.post("/documents", json=body)
    assert response.status_code in (200, 202), response.text
    return response.json()["documents"]


async def _clean(app, texts: list[str]) -> tuple[dict, dict]:
    await _project(app, "clean")
    items = await _ingest(app, "clean", texts)
    assert {i["status"] for i in items} == {"processed"}
    return await graph_counts(app.container.db, "clean"), await graph_rows(app.container.db, "clean")


async def _retry_all(app, project_id: str, ids: list[str]) -> dict:
    for doc_id in ids:
        response = await app.http.post(f"/documents/{doc_id}/retry", json={"project_id": project_id})
        assert response.status_code == 200, response.text
    done, states = await IngestionService(app.container).wait_until_done(project_id, ids, limit=60)
    assert done
    return states


def _graph_only(counts: dict) -> dict:
    return {k: v for k, v in counts.items() if k != "chunks"}


async def _assert_like_clean(app, clean: tuple[dict, dict]) -> None:
    assert await graph_counts(app.container.db, "faulty") == clean[0]
    assert await graph_rows(app.container.db, "faulty") == clean[1]


@pytest.mark.parametrize("fault", ["timeout", "http_500"])
async def test_llm_failure_fails_documents_with_reason_then_retry_equals_clean_run(
    fault, make_settings, start_app, fake_llm
):
    app = await start_app(make_settings(llm_timeout=0.3, llm_max_retries=1))
    clean = await _clean(app, TEXTS)
    await _project(app, "faulty")
    if fault == "timeout":
        fake_llm.latency = 1.5  # every call hangs past the client's timeout
    else:
        fake_llm.fail_next(1000, 500)  # the endpoint keeps failing, retries included
    items = await _ingest(app, "faulty", TEXTS)
    assert {i["status"] for i in items} == {"failed"}
    expected = (
        "LLM request timed out after retries (LLM_TIMEOUT)"
        if fault == "timeout"
        else "LLM request failed: HTTP 500 for POST /v1/chat/completions after retries"
    )
    assert all(expected in i["error"] for i in items), [i["error"] for i in items]
    assert _graph_only(await graph_counts(app.container.db, "faulty")) == EMPTY  # nothing half-merged

    fake_llm.reset()
    states = await _retry_all(app, "faulty", [i["id"] for i in items])
    assert {s.status for s in states.values()} == {"processed"}
    await _assert_like_clean(app, clean)


async def test_rate_limited_then_success_is_processed_without_failure(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(llm_max_retries=3))
    clean = await _clean(app, TEXTS[:1])
    await _project(app, "faulty")
    extracts_before = len(fake_llm.calls_of("extract"))
    fake_llm.fail_next(2, 429, "extract")
    [item] = await _ingest(app, "faulty", TEXTS[:1])
    assert item["status"] == "processed" and item["error"] is None
    assert len(fake_llm.calls_of("extract")) - extracts_before == 1  # the two 429s were retried by the client
    [doc] = (await document_rows(app.container.db, "faulty")).values()
    assert doc["attempts"] == 1
    await _assert_like_clean(app, clean)


async def test_garbage_extraction_output_is_counted_and_the_document_still_processed(
    make_settings, start_app, fake_llm
):
    app = await start_app(make_settings())
    before = metrics.EXTRACTION_MALFORMED._value.get()
    fake_llm.handlers["extract"] = lambda messages: (
        "Sure! Here is what I found:\n"
        "entity<|#|>Valid Name<|#|>concept<|#|>A well formed record among garbage.\n"
        "entity<|#|>missing fields\n"
        "relation<|#|>only<|#|>three\n"
        '{"not": "the format"}\n<|COMPLETE|>'
    )
    [item] = await _ingest(app, "default", ["Garbage comes back for this text about Zed."])
    assert item["status"] == "processed"
    assert metrics.EXTRACTION_MALFORMED._value.get() - before >= 2
    counts = await graph_counts(app.container.db, "default")
    assert counts["entities"] == 1 and counts["relations"] == 0
    entity = (await app.http.get("/entities/Valid Name")).json()
    assert entity["name"] == "Valid Name"

    fake_llm.handlers["extract"] = lambda messages: "\x00\x01 total nonsense ###"
    [other] = await _ingest(app, "default", ["Nothing useful is said by Quinn here."])
    assert other["status"] == "processed"  # nothing usable: an empty contribution, not a failure
    assert (await graph_counts(app.container.db, "default"))["entities"] == 1


def _events(body: str) -> list[dict]:
    return [json.loads(line[len("data: ") :]) for line in body.splitlines() if line.startswith("data: ")]


@pytest.mark.parametrize("path", ["/query/stream", "/query"])
async def test_stream_cut_mid_way_gives_an_error_event_not_a_500(path, make_settings, start_app, fake_llm):
    app = await start_app(make_settings(llm_max_retries=0))
    await _ingest(app, "default", TEXTS[:1])
    fake_llm.cut_stream_after = 3
    response = await app.http.post(path, json={"query": "Who founded Acme Labs?", "mode": "mix", "stream": True})
    assert response.status_code == 200
    events = _events(response.text)
    kinds = [e["type"] for e in events]
    assert kinds[-1] == "error" and "done" not in kinds
    assert kinds.count("chunk") == 3
    assert events[-1]["code"] == "provider_error" and "Traceback" not in response.text

    fake_llm.cut_stream_after = None  # the next query streams to the end
    again = await app.http.post(path, json={"query": "Who founded Acme Labs?", "mode": "mix", "stream": True})
    assert [e["type"] for e in _events(again.text)][-1] == "done"


async def test_query_with_llm_down_is_503_not_500(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(llm_max_retries=0))
    await _ingest(app, "default", TEXTS[:1])
    fake_llm.fail_next(1000, 500)
    response = await app.http.post("/query", json={"query": "Who is Alice Walker?", "mode": "hybrid"})
    assert response.status_code == 503 and response.json()["code"] == "provider_error"
    assert "Traceback" not in response.text


async def test_embeddings_down_fails_documents_then_retry_equals_clean_run(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(embedding_max_retries=0))
    clean = await _clean(app, TEXTS)
    await _project(app, "faulty")
    fake_llm.embeddings_down = True
    items = await _ingest(app, "faulty", TEXTS)
    assert {i["status"] for i in items} == {"failed"}
    assert all("Embedding request failed" in i["error"] for i in items)
    assert _graph_only(await graph_counts(app.container.db, "faulty")) == EMPTY

    fake_llm.embeddings_down = False
    states = await _retry_all(app, "faulty", [i["id"] for i in items])
    assert {s.status for s in states.values()} == {"processed"}
    await _assert_like_clean(app, clean)


async def test_embeddings_failing_after_the_merge_keep_the_merge_and_retry_only_finalises(
    make_settings, start_app, fake_llm
):
    app = await start_app(make_settings(embedding_max_retries=0))
    clean = await _clean(app, TEXTS[:1])
    await _project(app, "faulty")
    fake_llm.latency = 0.5  # extraction is slow, so the chunk embedding is done well before the merge
    seen = len(fake_llm.embedding_inputs)
    [item] = await _ingest(app, "faulty", TEXTS[:1], wait=False)

    async def chunks_embedded() -> bool:
        return len(fake_llm.embedding_inputs) > seen

    await until(chunks_embedded)
    fake_llm.embeddings_down = True  # now only the entity/relation embedding after the merge fails
    done, states = await IngestionService(app.container).wait_until_done("faulty", [item["id"]], limit=30)
    assert done and states[item["id"]].status == "failed"
    doc = (await document_rows(app.container.db, "faulty"))[item["id"]]
    assert doc["graph_merged"] and "Embedding request failed" in doc["error"]
    await _assert_like_clean(app, clean)  # the merge is complete, never partial

    fake_llm.reset()
    extracts = len(fake_llm.calls_of("extract"))
    states = await _retry_all(app, "faulty", [item["id"]])
    assert states[item["id"]].status == "processed"
    assert len(fake_llm.calls_of("extract")) == extracts  # the retry did not extract or merge again
    await _assert_like_clean(app, clean)
    entity = (await app.http.get("/entities/Alice Walker", params={"project_id": "faulty"})).json()
    assert entity["name"] == "Alice Walker"
