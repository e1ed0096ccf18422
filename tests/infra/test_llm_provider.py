"""The LLM/embedding providers through the real openai SDK against the fake server; token headers."""

from __future__ import annotations

import asyncio

import pytest

from app.core.errors import LLMNotConfigured, ProviderError
from app.core.usage import track_usage
from app.providers.embeddings import EmbeddingClient


def _llm_route(app):
    """A test-only route that spends tokens through the real provider, like a query would."""

    @app.post("/_test/llm")
    async def spend(payload: dict):
        c = app.state.container
        result = await c.llm.chat([{"role": "user", "content": payload["prompt"]}], operation="bypass")
        return {"text": result.text}


async def test_chat_reports_provider_usage(app_client, fake_llm):
    fake_llm.fixed_usage = (123, 45)
    with track_usage() as usage:
        result = await app_client.container.llm.chat([{"role": "user", "content": "hi"}], operation="query")
    assert result.text.startswith("Answer to 'hi'")
    assert (usage.prompt_tokens, usage.completion_tokens, usage.llm_calls) == (123, 45, 1)
    assert fake_llm.calls[-1].operation == "query"


async def test_usage_counted_with_tokenizer_when_provider_omits_it(app_client, fake_llm):
    fake_llm.omit_usage = True
    fake_llm.handlers["query"] = lambda messages: "one two three"
    with track_usage() as usage:
        await app_client.container.llm.chat([{"role": "user", "content": "hello world"}], operation="query")
    assert usage.completion_tokens == app_client.container.tokenizer.count("one two three")
    assert usage.prompt_tokens > 0


async def test_retry_on_429_then_success(app_client, fake_llm):
    fake_llm.fail_next(1, status=429)
    result = await app_client.container.llm.chat([{"role": "user", "content": "x"}], operation="query")
    assert result.text
    assert len(fake_llm.calls) == 1  # the failed attempt never reached a handler


async def test_persistent_5xx_raises_provider_error(app_client, fake_llm):
    fake_llm.fail_next(10, status=500)
    with pytest.raises(ProviderError):
        await app_client.container.llm.chat([{"role": "user", "content": "x"}], operation="query")


async def test_a_5xx_error_says_it_was_retried(app_client, fake_llm):
    fake_llm.fail_next(10, status=500)
    with pytest.raises(ProviderError) as raised:
        await app_client.container.llm.chat([{"role": "user", "content": "x"}], operation="query")
    assert str(raised.value) == "LLM request failed: HTTP 500 for POST /v1/chat/completions after retries: injected 500"


@pytest.mark.parametrize(
    ("status", "hint"),
    [
        (404, "; check LLM_BASE_URL, the API's root (most end in /v1), and LLM_MODEL, a model the endpoint serves"),
        (401, "; the key LLM_API_KEY was refused"),
    ],
)
async def test_a_misconfiguration_status_names_the_setting_and_is_not_retried(app_client, fake_llm, status, hint):
    fake_llm.fail_next(10, status=status)
    with pytest.raises(ProviderError) as raised:
        await app_client.container.llm.chat([{"role": "user", "content": "x"}], operation="query")
    message = str(raised.value)
    assert message.startswith(f"LLM request refused: HTTP {status} for POST /v1/chat/completions: injected {status}")
    assert hint in message and "after retries" not in message
    assert fake_llm.pending_failures() == 9  # one call, no retry: the SDK retries neither


async def test_embedding_failures_name_their_settings(app_client, fake_llm):
    fake_llm.fail_next_embeddings(1, status=404)
    with pytest.raises(ProviderError) as raised:
        await app_client.container.embedder.embed(["some text"])
    assert "Embedding request refused: HTTP 404 for POST /v1/embeddings" in str(raised.value)
    assert "check EMBEDDING_BASE_URL" in str(raised.value) and "EMBEDDING_MODEL" in str(raised.value)


async def test_no_llm_configured_raises_503_error(start_app, make_settings):
    app = await start_app(make_settings(llm_model=None, llm_base_url=None), _llm_route)
    with pytest.raises(LLMNotConfigured):
        await app.container.llm.chat([{"role": "user", "content": "x"}], operation="query")
    response = await app.http.post("/_test/llm", json={"prompt": "hello"})
    assert response.status_code == 503
    assert response.json()["code"] == "llm_not_configured"
    assert "LLM_MODEL" in response.json()["detail"]


async def test_concurrency_is_bounded(start_app, make_settings, fake_llm):
    app = await start_app(make_settings(llm_max_async=2))
    fake_llm.latency = 0.05
    await asyncio.gather(
        *(app.container.llm.chat([{"role": "user", "content": f"q{i}"}], operation="query") for i in range(8))
    )
    assert fake_llm.peak_in_flight == 2


async def test_token_headers_per_request(start_app, settings, fake_llm):
    app = await start_app(settings, _llm_route)
    response = await app.http.post("/_test/llm", json={"prompt": "one two three"})
    call = fake_llm.calls[-1]
    assert response.headers["x-token-input"] == str(call.prompt_tokens)
    assert response.headers["x-token-output"] == str(call.completion_tokens)
    assert (await app.http.get("/projects")).headers["x-token-input"] == "0"


async def test_concurrent_requests_never_mix_token_counts(start_app, settings, fake_llm):
    app = await start_app(settings, _llm_route)
    fake_llm.latency = 0.05
    short, long = "alpha", " ".join(["word"] * 300)
    responses = await asyncio.gather(
        *(app.http.post("/_test/llm", json={"prompt": short if i % 2 else long}) for i in range(10))
    )
    for i, response in enumerate(responses):
        prompt = short if i % 2 else long
        expected = len(prompt.split())
        assert response.headers["x-token-input"] == str(expected)
        assert response.headers["x-token-output"] == str(len(response.json()["text"].split()))


async def test_embeddings_batched_and_dimension_checked(start_app, make_settings, fake_llm):
    app = await start_app(make_settings(embedding_batch_size=3))
    texts = [f"text number {i}" for i in range(10)]
    with track_usage() as usage:
        vectors = await app.container.embedder.embed(texts)
    assert len(vectors) == 10 and all(len(v) == 64 for v in vectors)
    assert usage.embedding_calls == 4  # 3 + 3 + 3 + 1
    wrong = EmbeddingClient(make_settings(embedding_dim=32), app.container.tokenizer)
    with pytest.raises(ProviderError, match="EMBEDDING_DIM"):
        await wrong.embed(["x"])
    await wrong.close()


async def test_stream_yields_deltas_and_records_usage(app_client, fake_llm):
    fake_llm.handlers["query"] = lambda messages: "streamed answer text"
    with track_usage() as usage:
        parts = [
            p async for p in app_client.container.llm.stream([{"role": "user", "content": "q"}], operation="query")
        ]
    assert "".join(parts) == "streamed answer text"
    assert usage.completion_tokens == 3
