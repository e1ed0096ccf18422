"""Every list of a request has a cap, and a body of countless tiny items is refused before it is parsed:
by BodyLimitMiddleware past MAX_REQUEST_JSON_VALUES values, else by the schema's cap on the list as a whole."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from app.core.config import Settings
from app.schemas.common import MAX_CHAT_MESSAGES, MAX_DOCUMENTS_ITEMS, MAX_HISTORY_ITEMS, MAX_IDS

MESSAGE = {"role": "user", "content": "hi"}


def _requests(items: int) -> list[tuple[str, str, dict]]:
    return [
        ("POST", "/v1/chat/completions", {"model": "lightrag", "messages": [MESSAGE] * items}),
        ("POST", "/api/chat", {"model": "lightrag", "stream": False, "messages": [MESSAGE] * items}),
        ("POST", "/query", {"query": "Who?", "conversation_history": [MESSAGE] * items}),
        ("POST", "/lightrag/query", {"query": "Who?", "conversation_history": [MESSAGE] * items}),
        ("POST", "/documents", {"documents": [{"text": "a"}] * items}),
        ("POST", "/lightrag/documents/texts", {"texts": ["a"] * items}),
        ("POST", "/documents/delete", {"document_ids": ["a"] * items}),
        ("DELETE", "/lightrag/documents/delete_document", {"doc_ids": ["a"] * items}),
        ("POST", "/entities/merge", {"source_entities": ["a"] * items, "target_entity": "b"}),
    ]


@pytest.fixture
async def api(make_settings, start_app):
    return (await start_app(make_settings(worker_enabled=False))).http


async def _send(http, method: str, path: str, body: dict):
    return await http.request(
        method, path, content=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )


async def test_a_body_of_more_json_values_than_allowed_is_refused_while_it_streams_in(api):
    # 110,000 items are at least as many values, over the default MAX_REQUEST_JSON_VALUES (100,000), in < 4 MB
    for method, path, body in _requests(110_000):
        response = await _send(api, method, path, body)
        assert response.status_code == 413, (path, response.text[:300])
        assert response.json()["code"] == "payload_too_large" and "JSON values" in str(response.json()["detail"])
    assert (await api.get("/health")).status_code == 200


async def test_a_long_text_is_not_counted_as_values(api):
    body = {"documents": [{"text": "a, [b], {c}, " * 20_000, "metadata": {"note": '"[{,' * 1000}}]}
    response = await _send(api, "POST", "/documents", body)
    assert response.status_code == 202, response.text[:300]


@pytest.mark.parametrize(
    "cap,method,path,body,loc",
    [
        (MAX_CHAT_MESSAGES, "POST", "/v1/chat/completions", {"model": "lightrag"}, "messages"),
        (MAX_CHAT_MESSAGES, "POST", "/api/chat", {"model": "lightrag"}, "messages"),
        (MAX_HISTORY_ITEMS, "POST", "/query", {"query": "Who?"}, "conversation_history"),
        (MAX_HISTORY_ITEMS, "POST", "/lightrag/query", {"query": "Who?"}, "conversation_history"),
        (MAX_DOCUMENTS_ITEMS, "POST", "/documents", {}, "documents"),
        (MAX_DOCUMENTS_ITEMS, "POST", "/lightrag/documents/texts", {}, "texts"),
        (MAX_IDS, "POST", "/documents/delete", {}, "document_ids"),
        (MAX_IDS, "DELETE", "/lightrag/documents/delete_document", {}, "doc_ids"),
    ],
)
async def test_a_list_over_its_cap_is_refused_as_a_whole(api, cap, method, path, body, loc):
    item = {"/documents": {"text": "a"}}.get(path, "a" if loc.endswith("ids") or loc == "texts" else MESSAGE)
    response = await _send(api, method, path, {**body, loc: [item] * (cap + 1)})
    assert response.status_code == 422, response.text[:300]
    errors = response.json()["detail"]
    assert {(e["loc"][-1], e["type"]) for e in errors} == {(loc, "too_long")}  # not one error per item


def test_settings_cannot_widen_the_schema_caps():
    with pytest.raises(ValidationError):
        Settings(_env_file=None, max_history_messages=MAX_HISTORY_ITEMS + 1)
    with pytest.raises(ValidationError):
        Settings(_env_file=None, max_documents_per_request=MAX_DOCUMENTS_ITEMS + 1)
