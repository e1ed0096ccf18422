"""The OpenAI-compatible routes driven by the official `openai` SDK against the live service."""

from __future__ import annotations

import openai
import pytest

from tests.chat.conftest import ADMIN_KEY, SCOPED_KEY, ChatService, spent
from tests.support.fakes.openai_server import FakeOpenAI

QUESTION = [{"role": "user", "content": "Who is Charlie Gordon?"}]


def _client(service: ChatService, key: str = ADMIN_KEY) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{service.url}/v1", api_key=key, max_retries=0, timeout=60)


def test_models_are_the_projects(chat_service):
    models = _client(chat_service).models.list().data
    assert [m.id for m in models] == ["lightrag", "lightrag:default", "lightrag:other"]
    assert all(m.object == "model" and m.created > 0 for m in models)


def test_completion_with_references_and_usage(chat_service, fake_llm: FakeOpenAI):
    completion = _client(chat_service).chat.completions.create(model="lightrag", messages=QUESTION)
    choice = completion.choices[0]
    assert completion.object == "chat.completion" and completion.model == "lightrag"
    assert choice.finish_reason == "stop" and choice.message.role == "assistant"
    assert choice.message.content.startswith("Answer to 'Who is Charlie Gordon?'")
    assert choice.message.content.endswith("\n\n**Sources**\n- [1] story.txt")  # the one document its answer cites
    prompt, completion_tokens = spent(fake_llm)
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (prompt, completion_tokens)
    assert completion.usage.total_tokens == prompt + completion_tokens > 0


def test_streamed_completion_with_usage_in_the_last_chunk(chat_service, fake_llm: FakeOpenAI):
    stream = _client(chat_service).chat.completions.create(
        model="lightrag:default", messages=QUESTION, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    assert all(c.object == "chat.completion.chunk" and c.id == chunks[0].id for c in chunks)
    assert chunks[-2].choices[0].finish_reason == "stop" and chunks[-1].choices == []
    assert all(c.usage is None for c in chunks[:-1])
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == spent(fake_llm)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.startswith("Answer to 'Who is Charlie Gordon?'") and "[1] story.txt" in text


def test_streamed_completion_without_usage(chat_service):
    chunks = list(_client(chat_service).chat.completions.create(model="lightrag", messages=QUESTION, stream=True))
    assert chunks[-1].choices[0].finish_reason == "stop" and all(c.usage is None for c in chunks)


def test_history_content_parts_and_a_mode_prefix(chat_service, fake_llm: FakeOpenAI):
    messages = [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": [{"type": "text", "text": "Who is Charlie Gordon?"}]},
        {"role": "assistant", "content": "A baker."},
        {
            "role": "user",
            "content": [{"type": "text", "text": "/bypass "}, {"type": "text", "text": "What did I just ask?"}],
        },
    ]
    completion = _client(chat_service).chat.completions.create(model="lightrag", messages=messages)
    assert completion.choices[0].message.content == "Direct answer to 'What did I just ask?'."
    assert [c.operation for c in fake_llm.calls] == ["bypass"]
    assert fake_llm.calls[0].messages[-4:] == [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "Who is Charlie Gordon?"},
        {"role": "assistant", "content": "A baker."},
        {"role": "user", "content": "What did I just ask?"},
    ]


def test_a_scoped_key_is_refused_another_projects_model(chat_service):
    client = _client(chat_service, SCOPED_KEY)
    assert [m.id for m in client.models.list().data] == ["lightrag:other"]
    answer = client.chat.completions.create(model="lightrag:other", messages=[{"role": "user", "content": "Nemur?"}])
    assert answer.choices[0].message.content
    with pytest.raises(openai.PermissionDeniedError) as refused:
        client.chat.completions.create(model="lightrag", messages=QUESTION)
    assert refused.value.code == "project_forbidden" and "may not access project 'default'" in refused.value.message


def test_an_unknown_model_is_404_in_openais_error_shape(chat_service):
    with pytest.raises(openai.NotFoundError) as missing:
        _client(chat_service).chat.completions.create(model="gpt-4o", messages=QUESTION, stream=True)
    assert missing.value.code == "model_not_found" and "model 'gpt-4o' not found" in missing.value.message
    assert missing.value.type == "not_found_error"


def test_a_conversation_without_a_user_message_is_422(chat_service):
    with pytest.raises(openai.UnprocessableEntityError) as bad:
        _client(chat_service).chat.completions.create(
            model="lightrag", messages=[{"role": "system", "content": "You are helpful."}]
        )
    assert bad.value.code == "no_user_message" and bad.value.type == "invalid_request_error"


def test_a_wrong_key_is_401(chat_service):
    with pytest.raises(openai.AuthenticationError):
        _client(chat_service, "wrong").models.list()


def test_an_llm_failure_inside_the_stream_is_raised_by_the_sdk(chat_service, fake_llm: FakeOpenAI):
    client = _client(chat_service)
    fake_llm.fail_next(1, 500, operation="bypass")
    with pytest.raises(openai.InternalServerError) as failed:
        client.chat.completions.create(model="lightrag", messages=[{"role": "user", "content": "/bypass Hi"}])
    assert failed.value.status_code == 503 and failed.value.code == "provider_error"
    fake_llm.fail_next(1, 500, operation="bypass")
    with pytest.raises(openai.APIError) as in_band:
        list(
            client.chat.completions.create(
                model="lightrag", stream=True, messages=[{"role": "user", "content": "/bypass Hi"}]
            )
        )
    assert "LLM request failed" in in_band.value.message


def test_a_missing_field_is_named_once(chat_service):
    with chat_service.http() as http:
        response = http.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}]})
    assert response.status_code == 422
    body = response.json()
    assert body["error"]["message"] == "body.model: Field required"
    assert body["detail"] == [{"loc": ["body", "model"], "msg": "Field required", "type": "missing"}]
