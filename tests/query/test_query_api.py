"""/query HTTP contract: validation, empty/unknown projects, SSE streaming, token headers, chunk selection."""

from __future__ import annotations

import json

import pytest

from app.prompts.answer import NO_CONTEXT_ANSWER
from tests.support.graph_factory import GraphFactory
from tests.support.query_graph import THRESHOLD, algernon_graph

LL = ["Charlie Gordon"]


@pytest.fixture
async def qc(start_app, make_settings):
    app = await start_app(
        make_settings(
            cosine_threshold=THRESHOLD,
            max_top_k=100,
            max_token_limit=50_000,
            max_query_chars=200,
            max_history_messages=4,
        )
    )
    async with app.container.db.transaction() as conn:
        await algernon_graph().insert(conn)
    return app


@pytest.mark.parametrize(
    "patch",
    [
        {"mode": "fancy"},
        {"top_k": 0},
        {"chunk_top_k": -1},
        {"max_entity_tokens": 0},
        {"max_total_tokens": 0},
        {"chunk_selection": "random"},
        {"query": "   "},
        {"history_turns": -1},
        {"unknown_field": 1},
        {"conversation_history": [{"role": "robot", "content": "x"}]},
        {"ll_keywords": ["x" * 600]},
    ],
)
async def test_invalid_requests_are_422(qc, patch):
    response = await qc.http.post("/query", json={"query": "Who is Charlie Gordon?", **patch})
    assert response.status_code == 422, patch
    assert response.json()["code"] == "validation_error"


@pytest.mark.parametrize(
    "patch,message",
    [
        ({"top_k": 101}, "top_k must be at most 100"),
        ({"chunk_top_k": 500}, "chunk_top_k must be at most 100"),
        ({"max_total_tokens": 60_000}, "max_total_tokens must be at most 50000"),
        ({"query": "x" * 201}, "query is longer than 200 characters"),
        ({"conversation_history": [{"role": "user", "content": "hi"}] * 5}, "more than 4 messages"),
    ],
)
async def test_limits_above_configured_caps_are_422_with_a_clear_message(qc, fake_llm, patch, message):
    response = await qc.http.post("/query", json={"query": "Who is Charlie Gordon?", **patch})
    assert response.status_code == 422
    assert message in response.json()["detail"] and response.json()["code"] == "query_limits"
    assert fake_llm.calls == []


async def test_unknown_project_is_404(qc):
    response = await qc.http.post("/query", json={"project_id": "nope", "query": "Who is Charlie Gordon?"})
    assert response.status_code == 404 and response.json()["code"] == "project_not_found"


@pytest.mark.parametrize("mode", ["local", "global", "hybrid", "mix", "naive"])
async def test_empty_project_answers_nothing_found_without_llm(qc, fake_llm, mode):
    await qc.http.post("/projects", json={"id": "empty"})
    response = await qc.http.post(
        "/query", json={"project_id": "empty", "query": "Who is Charlie Gordon?", "mode": mode}
    )
    assert response.status_code == 200
    body = response.json()
    assert body["response"] == NO_CONTEXT_ANSWER
    assert body["context"] == {"entities": [], "relations": [], "chunks": []} and body["references"] == []
    assert fake_llm.calls == [] and fake_llm.embedding_inputs == []


async def test_token_headers_equal_the_fake_usage_of_this_request(qc, fake_llm):
    response = await qc.http.post("/query", json={"query": "Who is Charlie Gordon?", "mode": "hybrid"})
    assert response.status_code == 200
    assert {c.operation for c in fake_llm.calls} == {"keywords", "query"}
    assert int(response.headers["X-Token-Input"]) == sum(c.prompt_tokens for c in fake_llm.calls)
    assert int(response.headers["X-Token-Output"]) == sum(c.completion_tokens for c in fake_llm.calls)
    assert int(response.headers["X-Token-Input"]) > 0


def sse_events(text: str) -> list[dict]:
    return [json.loads(line[len("data: ") :]) for line in text.split("\n\n") if line.startswith("data: ")]


@pytest.mark.parametrize("path,extra", [("/query/stream", {}), ("/query", {"stream": True})])
async def test_stream_sends_token_chunks_then_a_final_event(qc, fake_llm, path, extra):
    response = await qc.http.post(path, json={"query": "Who is Charlie Gordon?", "mode": "local", **extra})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response.text)
    chunks = [e["text"] for e in events if e["type"] == "chunk"]
    assert len(chunks) > 1
    assert "".join(chunks) == "Answer to 'Who is Charlie Gordon?' from the provided context."
    final = events[-1]
    assert final["type"] == "done" and final["mode"] == "local"
    assert final["keywords"]["low_level"] == ["Charlie Gordon"]
    assert final["references"][0]["document_id"] == "doc-novel"
    assert final["usage"]["prompt_tokens"] == sum(c.prompt_tokens for c in fake_llm.calls)
    assert final["usage"]["completion_tokens"] == sum(c.completion_tokens for c in fake_llm.calls)
    [call] = fake_llm.calls_of("query")
    assert call.stream


async def test_stream_reports_llm_failure_in_band_and_errors_before_start_as_status(qc, fake_llm):
    fake_llm.fail_next(5, status=500, operation="query")
    response = await qc.http.post("/query/stream", json={"query": "Who?", "mode": "local", "ll_keywords": LL})
    events = sse_events(response.text)
    assert events[-1]["type"] == "error" and events[-1]["code"] == "provider_error"
    missing = await qc.http.post("/query/stream", json={"project_id": "nope", "query": "Who?"})
    assert missing.status_code == 404


async def test_weight_and_vector_selection_pick_different_chunks(start_app, make_settings):
    app = await start_app(make_settings(cosine_threshold=THRESHOLD))
    g = GraphFactory()
    texts = [
        f"Filler paragraph number {w} about nothing in particular." for w in ("one", "two", "three", "four", "five")
    ]
    texts += ["The lighthouse keeper polished the great lamp.", "Storms battered the lighthouse lamp all night."]
    ids = g.document("doc-keeper", "keeper.txt", texts)
    g.entity("Keeper", "person", "A keeper keeper keeper.", ids)
    async with app.container.db.transaction() as conn:
        await g.insert(conn)
    body = {"query": "lighthouse lamp", "mode": "local", "ll_keywords": ["Keeper"], "only_need_context": True}
    weight = (await app.http.post("/query", json={**body, "chunk_selection": "weight"})).json()
    vector = (await app.http.post("/query", json={**body, "chunk_selection": "vector"})).json()
    # WEIGHT: a single entity gives its first 5 chunks; VECTOR: budget 5*1/2 = 2, closest to the query
    assert [c["id"] for c in weight["context"]["chunks"]] == ids[:5]
    assert sorted(c["id"] for c in vector["context"]["chunks"]) == ids[5:]


async def test_scoped_api_key_queries_only_its_projects(start_app, make_settings, fake_llm):
    app = await start_app(make_settings(api_keys=["admin", "team-key:team"]))
    await app.http.post("/projects", json={"id": "team"}, headers={"X-API-Key": "admin"})
    body = {"query": "Who?", "mode": "naive", "only_need_context": True}
    headers = {"X-API-Key": "team-key"}
    assert (await app.http.post("/query", json={**body, "project_id": "team"}, headers=headers)).status_code == 200
    for path in ("/query", "/query/stream"):
        denied = await app.http.post(path, json=body, headers=headers)  # project "default"
        assert denied.status_code == 403, path
    assert (await app.http.post("/query", json=body)).status_code == 401
