"""The compatibility routes refuse what the service's own routes refuse, with the same 422: they share their
field types (app/adapters/lightrag/schemas.py), so no limit is copied or skipped."""

from __future__ import annotations

import json

import pytest

from tests.compat.conftest import CompatService

LONG_SOURCE = "s" * 300_000


def test_a_file_source_over_the_native_limit_is_refused(compat_service: CompatService):
    with compat_service.http(workspace="other") as http:
        before = http.get("/documents/status_counts").json()["status_counts"]
        texts = http.post("/documents/texts", json={"texts": ["Hilda rides a bike."], "file_sources": [LONG_SOURCE]})
        text = http.post("/documents/text", json={"text": "Hilda rides a bike.", "file_source": LONG_SOURCE})
        control = http.post("/documents/texts", json={"texts": ["Hilda rides a bike."], "file_sources": ["a\x07.md"]})
        after = http.get("/documents/status_counts").json()["status_counts"]
    for response in (texts, text, control):
        assert response.status_code == 422, response.text[:300]
        assert response.json()["code"] == "validation_error"
    assert after == before


@pytest.mark.parametrize(
    "field", ["top_k", "chunk_top_k", "max_entity_tokens", "max_relation_tokens", "max_total_tokens", "history_turns"]
)
def test_booleans_are_not_numbers(compat_service: CompatService, field: str):
    with compat_service.http() as http:
        response = http.post("/query/data", json={"query": "Who is Charlie?", field: True})
    assert response.status_code == 422, response.text[:300]
    assert field in json.dumps(response.json()["detail"])


def test_booleans_are_not_page_numbers(compat_service: CompatService):
    with compat_service.http() as http:
        assert http.post("/documents/paginated", json={"page": True}).status_code == 422
        assert http.post("/documents/paginated", json={"page_size": 50.0}).status_code == 422
        assert http.post("/documents/paginated", json={"page": 1, "page_size": 50}).status_code == 200


@pytest.mark.parametrize("doc_id", [".", "..", "a/b", "a\u202eb", "x" * 300])
def test_document_ids_are_checked_like_native_ids(compat_service: CompatService, doc_id: str):
    with compat_service.http() as http:
        response = http.request("DELETE", "/documents/delete_document", json={"doc_ids": [doc_id]})
    assert response.status_code == 422, response.text[:300]
    assert response.json()["code"] == "validation_error"


def test_keywords_are_checked_before_the_query_is_translated(compat_service: CompatService):
    with compat_service.http() as http:
        long = http.post("/query", json={"query": "Who is Charlie?", "hl_keywords": ["k" * 513]})
        many = http.post("/query", json={"query": "Who is Charlie?", "ll_keywords": [f"k{i}" for i in range(65)]})
    for response in (long, many):
        assert response.status_code == 422
        assert response.json()["detail"][0]["loc"][:2] in (["body", "hl_keywords"], ["body", "ll_keywords"])
