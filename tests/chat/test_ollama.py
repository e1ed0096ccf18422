"""The Ollama-compatible routes driven by the official `ollama` Python client against the live service."""

from __future__ import annotations

import json

import httpx
import ollama
import pytest

from tests.chat.conftest import ADMIN_KEY, SCOPED_KEY, ChatService, spent
from tests.support.fakes.openai_server import FakeOpenAI


def _client(service: ChatService, key: str = ADMIN_KEY) -> ollama.Client:
    return ollama.Client(host=service.url, headers={"Authorization": f"Bearer {key}"}, timeout=60)


def test_version_and_one_model_per_project(chat_service):
    with chat_service.http() as http:  # the client has no call for it; Open WebUI asks it to check a connection
        assert http.get("/api/version").json()["version"]
    client = _client(chat_service)
    names = [m.model for m in client.list().models]
    assert names == ["lightrag", "lightrag:default", "lightrag:other"]
    assert all(m.details.family == "lightrag" and m.modified_at is not None for m in client.list().models)


def test_chat_answers_from_the_project_with_references_and_honest_counters(chat_service, fake_llm: FakeOpenAI):
    response = _client(chat_service).chat(
        model="lightrag", stream=False, messages=[{"role": "user", "content": "Who is Charlie Gordon?"}]
    )
    content = response.message.content
    assert response.message.role == "assistant" and response.done and response.done_reason == "stop"
    assert content.startswith("Answer to 'Who is Charlie Gordon?'")
    assert content.endswith("\n\n**Sources**\n- [1] story.txt")  # the one document its answer cites
    assert [c.operation for c in fake_llm.calls][-1] == "query"
    assert (response.prompt_eval_count, response.eval_count) == spent(fake_llm) and response.eval_count > 0
    parts = response.load_duration + response.prompt_eval_duration + response.eval_duration
    assert response.load_duration > 0 and response.eval_duration > 0
    assert parts == response.total_duration < 60 * 10**9


def test_streamed_chat_is_the_same_answer_in_pieces(chat_service, fake_llm: FakeOpenAI):
    chunks = list(
        _client(chat_service).chat(
            model="lightrag:default", stream=True, messages=[{"role": "user", "content": "Who is Alice Kinnian?"}]
        )
    )
    assert len(chunks) > 3 and not any(c.done for c in chunks[:-1])
    last = chunks[-1]
    assert last.done and last.done_reason == "stop" and last.message.content == ""
    text = "".join(c.message.content for c in chunks)
    assert text.startswith("Answer to 'Who is Alice Kinnian?'") and "[1] story.txt" in text
    assert (last.prompt_eval_count, last.eval_count) == spent(fake_llm)
    assert last.total_duration >= last.eval_duration > 0


def test_history_and_a_mode_prefix(chat_service, fake_llm: FakeOpenAI):
    messages = [
        {"role": "user", "content": "/local Who is Charlie Gordon?"},
        {"role": "assistant", "content": "A baker."},
        {"role": "user", "content": "/naive   Alice Kinnian teaches Charlie Gordon to read at which school?"},
    ]
    response = _client(chat_service).chat(model="lightrag", messages=messages, stream=False)
    assert [c.operation for c in fake_llm.calls] == ["query"]  # naive: no keyword extraction
    sent = fake_llm.calls[0].messages
    assert sent[1:] == [
        {"role": "user", "content": "Who is Charlie Gordon?"},
        {"role": "assistant", "content": "A baker."},
        {"role": "user", "content": "Alice Kinnian teaches Charlie Gordon to read at which school?"},
    ]
    assert "[1] story.txt" in response.message.content


def test_bypass_and_context_prefixes(chat_service, fake_llm: FakeOpenAI):
    client = _client(chat_service)
    bypass = client.chat(model="lightrag", messages=[{"role": "user", "content": "/bypass Say hello"}], stream=False)
    assert bypass.message.content == "Direct answer to 'Say hello'."  # no references: nothing was retrieved
    assert [c.operation for c in fake_llm.calls] == ["bypass"]
    context = client.chat(
        model="lightrag", stream=False, messages=[{"role": "user", "content": "/context Who is Charlie Gordon?"}]
    )
    assert "Charlie Gordon" in context.message.content and "story.txt" in context.message.content
    assert "query" not in [c.operation for c in fake_llm.calls]


def test_generate_streaming_and_not(chat_service):
    client = _client(chat_service)
    whole = client.generate(model="lightrag:other", prompt="Who is Professor Nemur?", stream=False)
    assert whole.done and whole.response.startswith("Answer to 'Who is Professor Nemur?'")
    assert "[1] note.txt" in whole.response
    pieces = list(client.generate(model="lightrag:other", prompt="/hybrid Who is Professor Nemur?", stream=True))
    assert pieces[-1].done and pieces[-1].eval_count > 0
    assert "".join(p.response for p in pieces).startswith("Answer to 'Who is Professor Nemur?'")


def test_a_scoped_key_sees_and_uses_only_its_projects(chat_service):
    client = _client(chat_service, SCOPED_KEY)
    assert [m.model for m in client.list().models] == ["lightrag:other"]
    answer = client.chat(model="lightrag:other", messages=[{"role": "user", "content": "Who is Nemur?"}], stream=False)
    assert "note.txt" in answer.message.content
    for model in ("lightrag", "lightrag:default"):
        with pytest.raises(ollama.ResponseError) as refused:
            client.chat(model=model, messages=[{"role": "user", "content": "Who is Charlie Gordon?"}])
        assert refused.value.status_code == 403 and "may not access project 'default'" in refused.value.error


@pytest.mark.parametrize("model", ["gpt-4o", "lightrag:missing", "lightrag:Not A Project"])
def test_unknown_models_are_404_in_ollamas_error_shape(chat_service, model):
    with pytest.raises(ollama.ResponseError) as missing:
        _client(chat_service).chat(model=model, messages=[{"role": "user", "content": "Hi?"}], stream=False)
    assert missing.value.status_code == 404 and f"model '{model}' not found" in missing.value.error


@pytest.mark.parametrize(
    "messages,code",
    [
        ([{"role": "system", "content": "Be brief."}], "no_user_message"),
        ([{"role": "user", "content": "/local   "}], "empty_query"),
    ],
)
def test_bad_conversations_are_422(chat_service, messages, code):
    with chat_service.http() as http:
        response = http.post("/api/chat", json={"model": "lightrag", "messages": messages})
    assert response.status_code == 422
    body = response.json()
    assert body["code"] == code and body["error"] == body["detail"]


def test_a_missing_or_wrong_key_is_401(chat_service):
    with pytest.raises(ollama.ResponseError) as refused:
        _client(chat_service, "wrong").list()
    assert refused.value.status_code == 401
    assert httpx.get(f"{chat_service.url}/api/version").status_code == 401


def test_an_llm_failure_is_an_error_before_or_inside_the_stream(chat_service, fake_llm: FakeOpenAI):
    client = _client(chat_service)
    fake_llm.fail_next(1, 500, operation="bypass")
    with pytest.raises(ollama.ResponseError) as failed:
        client.chat(model="lightrag", messages=[{"role": "user", "content": "/bypass Hi"}], stream=False)
    assert failed.value.status_code == 503
    fake_llm.fail_next(1, 500, operation="bypass")
    with pytest.raises(ollama.ResponseError) as in_band:  # the NDJSON stream had started: an {"error"} line
        list(client.chat(model="lightrag", messages=[{"role": "user", "content": "/bypass Hi"}], stream=True))
    assert "LLM request failed" in in_band.value.error


def test_streaming_is_the_default_as_ndjson(chat_service):
    with chat_service.http() as http:
        response = http.post("/api/generate", json={"model": "lightrag", "prompt": "Who is Charlie Gordon?"})
    assert response.status_code == 200 and response.headers["content-type"] == "application/x-ndjson"
    lines = [json.loads(line) for line in response.text.splitlines()]
    assert all(not line["done"] for line in lines[:-1]) and lines[-1]["done"] and lines[-1]["response"] == ""
    assert {"total_duration", "load_duration", "prompt_eval_count", "eval_count"} <= set(lines[-1])


@pytest.mark.parametrize("content_type", [None, "application/x-www-form-urlencoded", "text/plain"])
def test_a_json_body_is_read_whatever_its_content_type_as_ollama_does(chat_service, content_type):
    """Ollama's own examples use `curl -d '{...}'`, which labels the JSON as a form."""
    headers = {"content-type": content_type} if content_type else {}
    with chat_service.http() as http:
        http.headers.pop("content-type", None)
        generated = http.post(
            "/api/generate",
            headers=headers,
            content=b'{"model": "lightrag", "prompt": "Who is Charlie Gordon?", "stream": false}',
        )
        chatted = http.post(
            "/api/chat",
            headers=headers,
            content=json.dumps(
                {
                    "model": "lightrag",
                    "stream": False,
                    "messages": [{"role": "user", "content": "Who is Alice Kinnian?"}],
                }
            ).encode(),
        )
    assert generated.status_code == 200, generated.text
    assert generated.json()["response"].startswith("Answer to 'Who is Charlie Gordon?'")
    assert chatted.status_code == 200, chatted.text
    assert chatted.json()["message"]["content"].startswith("Answer to 'Who is Alice Kinnian?'")


@pytest.mark.parametrize(
    "body,message",
    [
        (b'{"model": "lightrag", "prompt": "Why', "the request body is not valid JSON"),
        (b"model=lightrag&prompt=hi", "the request body is not valid JSON"),
        (b"[1, 2]", "the request body must be a JSON object"),
        (b"", "the request body must be a JSON object"),
    ],
)
def test_an_unreadable_body_is_one_clear_error(chat_service, body, message):
    with chat_service.http() as http:
        for route in ("/api/generate", "/api/chat", "/api/show"):
            response = http.post(route, content=body, headers={"content-type": "application/x-www-form-urlencoded"})
            assert response.status_code == 422, response.text
            error = response.json()
            assert error["error"].startswith(message) and error["error"].count(message) == 1, error
            assert error["code"] == "validation_error" and len(error["detail"]) == 1


def test_a_missing_field_is_named_once(chat_service):
    with chat_service.http() as http:
        response = http.post("/api/generate", content=b'{"prompt": "hi"}')
    assert response.status_code == 422
    assert response.json()["error"] == "model: Field required"


def test_show_describes_a_model_as_ollama_does(chat_service):
    client = _client(chat_service)
    shown = client.show("lightrag:other")
    assert shown.details.family == "lightrag" and shown.details.families == ["lightrag"]
    assert shown.capabilities == ["completion"]
    assert shown.modelinfo["general.architecture"] == "lightrag"
    assert shown.modified_at is not None and shown.modelfile is not None and shown.template is not None
    assert client.show("lightrag").details.family == "lightrag"
    with chat_service.http() as http:  # older clients name the model `name`
        assert http.post("/api/show", json={"name": "lightrag:default"}).status_code == 200

    for missing in ("gpt-4o", "lightrag:missing"):
        with pytest.raises(ollama.ResponseError) as unknown:
            client.show(missing)
        assert unknown.value.status_code == 404 and f"model '{missing}' not found" in unknown.value.error
    with pytest.raises(ollama.ResponseError) as refused:
        _client(chat_service, SCOPED_KEY).show("lightrag")
    assert refused.value.status_code == 403


def test_ps_lists_the_models_being_served(chat_service):
    served = _client(chat_service).ps().models
    assert [m.model for m in served] == ["lightrag", "lightrag:default", "lightrag:other"]
    assert all(m.name == m.model and m.details.family == "lightrag" and m.expires_at is not None for m in served)
    assert [m.model for m in _client(chat_service, SCOPED_KEY).ps().models] == ["lightrag:other"]
