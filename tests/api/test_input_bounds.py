"""Crafted input is refused at the door with a 4xx and never leaves data the API cannot serve afterwards."""

from __future__ import annotations

import json

import pytest

RLO = "\u202e"


def _nested(depth: int) -> dict:
    value: dict = {"leaf": 1}
    for _ in range(depth - 1):
        value = {"n": value}
    return value


@pytest.fixture
async def idle(make_settings, start_app):
    return (await start_app(make_settings(worker_enabled=False))).http


async def test_deep_metadata_is_refused_and_listing_keeps_working(idle):
    for depth in (33, 300, 2000):
        metadata = '{"n": ' * (depth - 1) + '{"leaf": 1}' + "}" * (depth - 1)
        body = '{"documents": [{"text": "Deep metadata.", "metadata": ' + metadata + "}]}"
        response = await idle.post("/documents", content=body, headers={"Content-Type": "application/json"})
        assert response.status_code in (400, 422), (depth, response.text[:200])  # 400: JSON too deep to parse
    shallow = {"id": "shallow", "text": "Fine.", "metadata": _nested(32)}
    ok = await idle.post("/documents", json={"documents": [shallow]})
    assert ok.status_code == 202
    assert (await idle.get("/documents")).status_code == 200
    assert (await idle.get("/documents/shallow")).json()["metadata"] == _nested(32)


async def test_oversized_metadata_is_refused(idle):
    body = {"documents": [{"text": "Big metadata.", "metadata": {"blob": "x" * 70_000}}]}
    response = await idle.post("/documents", json=body)
    assert response.status_code == 422
    assert "metadata" in response.text


@pytest.mark.parametrize("doc_id", [".", "..", f"a{RLO}b", "a/b"])
async def test_dot_ids_and_bidi_controls_are_refused(idle, doc_id):
    response = await idle.post("/documents", json={"documents": [{"id": doc_id, "text": "Some text."}]})
    assert response.status_code == 422, doc_id
    assert (await idle.get("/documents")).json()["total"] == 0


async def test_ids_that_only_contain_dots_elsewhere_are_fine(idle):
    for doc_id in ("...", ".hidden", "..x", "v1.2"):
        response = await idle.post("/documents", json={"documents": [{"id": doc_id, "text": f"Text {doc_id}."}]})
        assert response.status_code == 202, doc_id
    assert (await idle.get("/documents/.hidden")).status_code == 200


async def test_bidi_override_in_a_file_path_is_refused(idle):
    body = {"documents": [{"text": "Report text.", "file_path": f"invoice{RLO}fdp.exe"}]}
    assert (await idle.post("/documents", json=body)).status_code == 422


async def test_bidi_override_in_an_upload_name_is_dropped(idle):
    files = {"files": (f"report{RLO}txt.md", b"Uploaded text about Oslo.", "text/plain")}
    response = await idle.post("/documents/upload", files=files)
    assert response.status_code == 202, response.text
    assert response.json()["documents"][0]["file_path"] == "reporttxt.md"


async def test_bidi_override_in_an_entity_name_is_dropped(idle):
    created = await idle.post("/entities", json={"name": f"Evil{RLO}Corp", "description": "A company."})
    assert created.status_code == 201
    assert created.json()["name"] == "EvilCorp"
    assert (await idle.get("/entities/EvilCorp")).status_code == 200


@pytest.mark.parametrize(
    "field", ["top_k", "chunk_top_k", "max_entity_tokens", "max_relation_tokens", "max_total_tokens", "history_turns"]
)
async def test_booleans_are_not_numbers(idle, field):
    response = await idle.post("/query", json={"query": "Anything?", field: True, "only_need_context": True})
    assert response.status_code == 422, field
    assert field in response.text


async def test_booleans_are_not_numbers_in_project_settings_or_weights(idle):
    project = await idle.post("/projects", json={"id": "p", "settings": {"chunk_size": True}})
    assert project.status_code == 422
    await idle.post("/entities", json={"name": "Alpha Node", "description": "One."})
    await idle.post("/entities", json={"name": "Beta Node", "description": "Two."})
    relation = await idle.post(
        "/relations", json={"source": "Alpha Node", "target": "Beta Node", "description": "Linked.", "weight": True}
    )
    assert relation.status_code == 422


# ----- NUL characters and lone surrogates (sent as JSON escapes, as a client's encoder writes them) -----


def _unsafe_requests(bad: str) -> list[tuple[str, str, dict]]:
    user = {"role": "user", "content": "Who is Charlie Gordon?"}
    said = {"role": "assistant", "content": bad}
    return [
        ("POST", "/query", {"query": f"Who is {bad}?", "mode": "mix"}),
        ("POST", "/query", {"query": "Who?", "mode": "local", "ll_keywords": [bad]}),
        ("POST", "/query", {"query": "Who?", "mode": "global", "hl_keywords": [bad]}),
        ("POST", "/query", {"query": "Who?", "conversation_history": [{"role": "user", "content": bad}]}),
        ("POST", "/query/stream", {"query": f"Who is {bad}?"}),
        ("POST", "/v1/chat/completions", {"model": "lightrag", "messages": [{"role": "user", "content": bad}]}),
        ("POST", "/v1/chat/completions", {"model": "lightrag", "messages": [user, said, user]}),
        (
            "POST",
            "/v1/chat/completions",
            {"model": "lightrag", "messages": [{"role": "user", "content": [{"type": "text", "text": bad}]}]},
        ),
        ("POST", "/api/chat", {"model": "lightrag", "stream": False, "messages": [{"role": "user", "content": bad}]}),
        ("POST", "/api/chat", {"model": "lightrag", "stream": False, "messages": [user, said, user]}),
        ("POST", "/api/generate", {"model": "lightrag", "stream": False, "prompt": f"Who is {bad}?"}),
        ("POST", "/lightrag/query", {"query": f"Who is {bad}?"}),
        ("POST", "/lightrag/query", {"query": "Who?", "hl_keywords": [bad]}),
        ("POST", "/lightrag/query", {"query": "Who?", "conversation_history": [{"role": "user", "content": bad}]}),
        ("POST", "/lightrag/query/stream", {"query": f"Who is {bad}?"}),
        ("POST", "/lightrag/query/data", {"query": f"Who is {bad}?"}),
        ("DELETE", "/lightrag/documents/delete_document", {"doc_ids": [f"doc-{bad}"]}),
    ]


@pytest.fixture
async def populated(make_settings, start_app):
    from tests.support.query_graph import THRESHOLD, algernon_graph

    app = await start_app(make_settings(worker_enabled=False, cosine_threshold=THRESHOLD))
    async with app.container.db.transaction() as conn:
        await algernon_graph().insert(conn)
    return app.http


@pytest.mark.parametrize("bad", ["a\x00b", "a\ud800b"], ids=["nul", "lone-surrogate"])
async def test_nul_and_lone_surrogates_are_refused_on_every_text_route(populated, bad):
    answers = []
    for method, path, body in _unsafe_requests(bad):
        response = await populated.request(
            method, path, content=json.dumps(body).encode(), headers={"content-type": "application/json"}
        )
        answers.append((path, json.dumps(body)[:70], response.status_code))
    track = await populated.get("/lightrag/documents/track_status/insert_x%00y")
    answers.append(("track_status", "NUL", track.status_code))
    assert [a for a in answers if a[2] != 422] == []
    assert (await populated.post("/query", json={"query": "Who is Charlie Gordon?"})).status_code == 200
