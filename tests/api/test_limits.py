"""Every configured limit answers a clear 413/422 naming the limit, and a value exactly at the limit passes."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import func, select

from app.db.tables import documents


@pytest.fixture
async def small(make_settings, start_app):
    """An app with tiny limits and no worker (nothing is processed, so nothing races the assertions)."""
    return await start_app(
        make_settings(
            worker_enabled=False,
            max_request_bytes=4096,
            max_upload_bytes=1024,
            max_document_chars=100,
            max_documents_per_request=2,
            max_query_chars=50,
            max_top_k=10,
            max_token_limit=500,
            max_history_messages=2,
            max_history_message_chars=20,
        )
    )


async def _stored(app) -> int:
    async with app.container.db.connect() as conn:
        return int(await conn.scalar(select(func.count()).select_from(documents)))


async def test_request_body_limit_declared_and_streamed(small):
    big = b'{"documents": [{"text": "' + b"a" * 5000 + b'"}]}'
    declared = await small.http.post("/documents", content=big, headers={"content-type": "application/json"})
    assert declared.status_code == 413
    assert declared.json()["code"] == "payload_too_large" and "4096 bytes" in declared.json()["detail"]

    async def chunks():  # no Content-Length: the middleware counts while the body streams in
        for start in range(0, len(big), 1000):
            yield big[start : start + 1000]

    streamed = await small.http.post("/documents", content=chunks(), headers={"content-type": "application/json"})
    assert streamed.status_code == 413 and streamed.json()["code"] == "payload_too_large"

    form = httpx.Request("POST", "http://x", files=[("files", ("a.txt", b"z" * 5000, "text/plain"))])
    multipart = form.read()

    async def parts():  # an upload streamed in pieces stops at the request limit too, not after parsing
        for start in range(0, len(multipart), 1000):
            yield multipart[start : start + 1000]

    upload = await small.http.post(
        "/documents/upload", content=parts(), headers={"content-type": form.headers["content-type"]}
    )
    assert upload.status_code == 413 and upload.json()["code"] == "payload_too_large"
    assert await _stored(small) == 0


async def test_document_size_limit(small):
    too_long = await small.http.post("/documents", json={"documents": [{"text": "x" * 101}]})
    assert too_long.status_code == 413
    assert too_long.json()["code"] == "document_too_large" and "limit of 100" in too_long.json()["detail"]
    mixed = await small.http.post("/documents", json={"documents": [{"text": "x" * 101}, {"text": "y" * 100}]})
    assert mixed.status_code == 202
    assert [d["status"] for d in mixed.json()["documents"]] == ["rejected", "pending"]
    assert "limit of 100" in mixed.json()["documents"][0]["error"]
    assert await _stored(small) == 1


async def test_documents_per_request_limit_for_texts_and_uploads(small):
    texts = await small.http.post("/documents", json={"documents": [{"text": f"t{i}"} for i in range(3)]})
    assert texts.status_code == 422
    assert texts.json()["code"] == "too_many_documents" and "At most 2" in texts.json()["detail"]
    files = [("files", (f"f{i}.txt", f"file {i}".encode(), "text/plain")) for i in range(3)]
    uploads = await small.http.post("/documents/upload", files=files)
    assert uploads.status_code == 422 and uploads.json()["code"] == "too_many_documents"
    assert await _stored(small) == 0
    ok = await small.http.post("/documents", json={"documents": [{"text": "t1"}, {"text": "t2"}]})
    assert ok.status_code == 202 and await _stored(small) == 2


async def test_upload_size_limit_per_file(small):
    files = [("files", ("big.txt", b"b" * 1025, "text/plain")), ("files", ("ok.txt", b"c" * 50, "text/plain"))]
    response = await small.http.post("/documents/upload", files=files)
    assert response.status_code == 202
    big, ok = response.json()["documents"]
    assert big["status"] == "rejected" and "limit of 1024 bytes" in big["error"]
    assert ok["status"] == "pending"
    only_big = await small.http.post("/documents/upload", files=[("files", ("big.txt", b"b" * 1025, "text/plain"))])
    assert only_big.status_code == 413 and only_big.json()["code"] == "document_too_large"


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("query", "q" * 51, "longer than 50 characters"),
        ("top_k", 11, "top_k must be at most 10"),
        ("chunk_top_k", 11, "chunk_top_k must be at most 10"),
        ("max_entity_tokens", 501, "max_entity_tokens must be at most 500"),
        ("max_relation_tokens", 501, "max_relation_tokens must be at most 500"),
        ("max_total_tokens", 501, "max_total_tokens must be at most 500"),
        ("conversation_history", [{"role": "user", "content": "hi"}] * 3, "more than 2 messages"),
        ("conversation_history", [{"role": "user", "content": "h" * 21}], "longer than 20 characters"),
    ],
)
async def test_query_limits(small, field, value, named):
    body = {"query": "What is Alpha?", "mode": "naive", "only_need_context": True, field: value}
    for path in ("/query", "/query/stream"):
        response = await small.http.post(path, json=body)
        assert response.status_code == 422, (path, response.text)
        assert response.json()["code"] == "query_limits" and named in response.json()["detail"]


async def test_query_values_at_the_limits_pass(small):
    body = {
        "query": "q" * 50,
        "mode": "naive",
        "only_need_context": True,
        "top_k": 10,
        "chunk_top_k": 10,
        "max_entity_tokens": 500,
        "max_relation_tokens": 500,
        "max_total_tokens": 500,
        "conversation_history": [{"role": "user", "content": "h" * 20}, {"role": "assistant", "content": "a"}],
    }
    response = await small.http.post("/query", json=body)
    assert response.status_code == 200, response.text


async def test_non_positive_limits_are_422(small):
    for field in ("top_k", "chunk_top_k", "max_total_tokens"):
        response = await small.http.post("/query", json={"query": "x", field: 0})
        assert response.status_code == 422 and response.json()["code"] == "validation_error"
