"""/query, /query/stream (NDJSON read line by line, as LightRAG's client does) and /query/data."""

from __future__ import annotations

import json

from tests.compat.conftest import CompatService


def test_query_answers_with_references(compat_service: CompatService):
    with compat_service.http() as http:
        answer = http.post("/query", json={"query": "Who teaches Charlie Gordon?", "mode": "mix"})
    assert answer.status_code == 200
    body = answer.json()
    assert body["response"].startswith("Answer to 'Who teaches Charlie Gordon?'")
    assert body["references"] == [{"reference_id": "1", "file_path": "story.txt", "content": None}]
    assert body["llm_generated"] is True


def test_query_chunk_content_and_no_references(compat_service: CompatService):
    with compat_service.http() as http:
        with_content = http.post(
            "/query", json={"query": "Who teaches Charlie Gordon?", "mode": "naive", "include_chunk_content": True}
        ).json()
        without = http.post("/query", json={"query": "Who teaches Charlie Gordon?", "include_references": False}).json()
    assert "Alice Kinnian" in with_content["references"][0]["content"][0]
    assert without["references"] is None


def test_only_need_context_returns_the_context_text(compat_service: CompatService):
    with compat_service.http() as http:
        body = http.post("/query", json={"query": "Who teaches Charlie Gordon?", "only_need_context": True}).json()
    assert "Alice Kinnian" in body["response"] and body["llm_generated"] is False


def test_stream_is_ndjson_references_first(compat_service: CompatService):
    with (
        compat_service.http() as http,
        http.stream("POST", "/query/stream", json={"query": "Who teaches Charlie Gordon?"}) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("application/x-ndjson")
        lines = [json.loads(line) for line in response.iter_lines() if line.strip()]
    assert lines[0] == {"references": [{"reference_id": "1", "file_path": "story.txt"}]}
    pieces = [line["response"] for line in lines[1:]]
    assert len(pieces) >= 1 and "".join(pieces).startswith("Answer to 'Who teaches Charlie Gordon?'")


def test_stream_false_is_one_line(compat_service: CompatService):
    with compat_service.http() as http:
        response = http.post("/query/stream", json={"query": "Who teaches Charlie Gordon?", "stream": False})
    lines = [json.loads(line) for line in response.text.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0]["references"][0]["file_path"] == "story.txt"
    assert lines[0]["response"].startswith("Answer to")


def test_query_data_shape(compat_service: CompatService):
    with compat_service.http() as http:
        body = http.post("/query/data", json={"query": "Who teaches Charlie Gordon?", "mode": "mix"}).json()
    assert body["status"] == "success" and set(body["data"]) == {"entities", "relationships", "chunks", "references"}
    assert body["data"]["references"] == [{"reference_id": "1", "file_path": "story.txt"}]
    chunk = body["data"]["chunks"][0]
    assert set(chunk) == {"content", "file_path", "chunk_id", "reference_id"} and chunk["reference_id"] == "1"
    if body["data"]["entities"]:
        assert set(body["data"]["entities"][0]) == {
            "entity_name",
            "entity_type",
            "description",
            "source_id",
            "file_path",
            "reference_id",
        }
    assert body["metadata"]["query_mode"] == "mix" and set(body["metadata"]["keywords"]) == {"high_level", "low_level"}
    # the descriptions as stored, as LightRAG Server gives them, not what the answer prompt leaves of them
    # beside the chunks (there, a sentence a shown chunk holds is left out)
    items = body["data"]["entities"] + body["data"]["relationships"]
    assert items and all(item["description"] for item in items)


def test_query_errors_are_clear(compat_service: CompatService):
    with compat_service.http() as http:
        blank = http.post("/query", json={"query": "   "})
        progress = http.post("/query/stream", json={"query": "Who is Charlie?", "include_progress": True})
        role = http.post(
            "/query", json={"query": "Who is Charlie?", "conversation_history": [{"role": "tool", "content": "x"}]}
        )
    assert blank.status_code == 422 and blank.json()["code"] == "validation_error"
    assert progress.status_code == 501 and progress.json()["code"] == "not_supported"
    assert role.status_code == 422 and role.json()["code"] == "validation_error"
