"""The providers on the SDK's aiohttp transport, sending bodies directly: what reaches the endpoint, how
answers are read (malformed ones included), timeouts, connection errors, and closing the sessions."""

from __future__ import annotations

import asyncio
import base64
import gc
import socket
import struct

import pytest

from app.core.errors import ProviderError
from app.core.usage import track_usage
from app.providers.embeddings import EmbeddingClient, parse_embeddings
from app.providers.llm import LLMClient
from app.providers.openai_http import parse_completion
from tests.support.fakes.openai_server import fake_embedding


async def test_chat_sends_auth_operation_and_only_the_given_fields(make_settings, app_client, fake_llm):
    llm = LLMClient(make_settings(llm_temperature=0.2), app_client.container.tokenizer)
    try:
        messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]
        await llm.chat(messages, operation="keywords", json_mode=True, max_tokens=50)
    finally:
        await llm.close()
    call = fake_llm.calls[-1]
    assert call.headers["authorization"] == "Bearer test-key"
    assert call.headers["x-lightrag-operation"] == "keywords"
    assert call.body == {
        "model": "fake-llm",
        "messages": messages,
        "temperature": 0.2,
        "response_format": {"type": "json_object"},
        "max_tokens": 50,
    }


async def test_chat_result_fields_from_the_answer(app_client, fake_llm):
    fake_llm.handlers["query"] = lambda messages: "<think>hidden</think> the\x00 answer"
    fake_llm.finish_reason = "length"
    fake_llm.fixed_usage = (7, 3)
    result = await app_client.container.llm.chat([{"role": "user", "content": "q"}], operation="query")
    assert (result.text, result.finish_reason, result.prompt_tokens, result.completion_tokens) == (
        "the answer",
        "length",
        7,
        3,
    )


async def test_embeddings_sent_with_auth_and_decoded_exactly(app_client, fake_llm):
    texts = ["Alice met Bob", "", "an entity description"]
    with track_usage() as usage:
        vectors = await app_client.container.embedder.embed(texts)
    assert fake_llm.embedding_headers["authorization"] == "Bearer test-key"
    assert fake_llm.embedding_inputs[-3:] == ["Alice met Bob", " ", "an entity description"]
    # float32 on the wire: equal to the fake's float64 vectors after a float32 round trip
    for text, vector in zip([t or " " for t in texts], vectors, strict=True):
        expected = struct.unpack("<64f", struct.pack("<64f", *fake_embedding(text, 64)))
        assert vector == list(expected)
    assert usage.embedding_tokens == sum(len(t.split()) for t in texts)


def test_parse_completion_reads_fields_and_tolerates_missing_usage():
    data = {
        "choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1},
    }
    assert parse_completion(data) == ("hi", "stop", 5, 1)
    assert parse_completion({"choices": [{"message": {"content": None}}], "usage": None}) == ("", None, None, None)
    assert parse_completion(
        {"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": "5", "completion_tokens": True}}
    ) == ("x", None, None, None)


@pytest.mark.parametrize(
    "data",
    [
        "<html>gateway error</html>",
        {},
        {"choices": []},
        {"choices": None},
        {"choices": ["text"]},
        {"choices": [{"message": {"content": [{"type": "text", "text": "parts"}]}}]},
    ],
)
def test_parse_completion_rejects_bodies_without_a_text_answer(data):
    with pytest.raises(ValueError):
        parse_completion(data)


def test_parse_embeddings_base64_floats_order_and_usage():
    packed = base64.b64encode(struct.pack("<2f", 0.5, -0.25)).decode()
    data = {
        "data": [{"index": 1, "embedding": [1.0, 2.0]}, {"index": 0, "embedding": packed}],
        "usage": {"prompt_tokens": 4},
    }
    assert parse_embeddings(data) == ([[0.5, -0.25], [1.0, 2.0]], 4)
    assert parse_embeddings({"data": []}) == ([], None)


@pytest.mark.parametrize(
    "data",
    [
        "not json",
        {"data": None},
        {"data": [{"embedding": [1.0]}]},
        {"data": [{"index": 0, "embedding": "%%%"}]},
        {"data": [{"index": 0, "embedding": base64.b64encode(b"abc").decode()}]},  # not whole float32s
        {"data": [{"index": 0, "embedding": 3}]},
        {"data": [None]},
    ],
)
def test_parse_embeddings_rejects_malformed_bodies(data):
    with pytest.raises(ValueError):
        parse_embeddings(data)


async def test_embedding_timeout_is_a_provider_error(make_settings, app_client, fake_llm):
    embedder = EmbeddingClient(
        make_settings(embedding_timeout=0.2, embedding_max_retries=0), app_client.container.tokenizer
    )
    fake_llm.embedding_latency = 1.0
    try:
        with pytest.raises(ProviderError, match=r"Embedding request timed out after retries \(EMBEDDING_TIMEOUT\)"):
            await embedder.embed(["slow"])
    finally:
        await embedder.close()


@pytest.mark.parametrize("endpoint", ["refusing", "hanging_up"])
async def test_connection_failures_are_connection_errors_not_timeouts(endpoint, make_settings, app_client):
    async def hang_up(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    server = None
    if endpoint == "refusing":
        with socket.socket() as sock:  # a port nothing listens on
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
    else:  # accepts, then closes before answering (a crashed or restarting endpoint)
        server = await asyncio.start_server(hang_up, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
    settings = make_settings(llm_base_url=f"http://127.0.0.1:{port}/v1", llm_max_retries=0, embedding_max_retries=0)
    tokenizer = app_client.container.tokenizer
    llm, embedder = LLMClient(settings, tokenizer), EmbeddingClient(settings, tokenizer)
    try:
        with pytest.raises(ProviderError, match=r"LLM endpoint unreachable after retries \(check LLM_BASE_URL\)"):
            await llm.chat([{"role": "user", "content": "x"}], operation="query")
        with pytest.raises(ProviderError, match=r"Embedding endpoint unreachable .*EMBEDDING_BASE_URL"):
            await embedder.embed(["x"])
    finally:
        await llm.close()
        await embedder.close()
        if server is not None:
            server.close()
            await server.wait_closed()


async def test_clients_built_without_a_loop_work_and_close_their_sessions(settings, app_client, fake_llm):
    """The aiohttp session appears on first use in the running loop; close() releases it. The unclosed
    control proves the check would see a leak."""
    loop = asyncio.get_running_loop()
    reported: list[str] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: reported.append(context["message"]))
    try:
        tokenizer = app_client.container.tokenizer
        llm, embedder = await asyncio.to_thread(
            lambda: (LLMClient(settings, tokenizer), EmbeddingClient(settings, tokenizer))
        )
        assert (await llm.chat([{"role": "user", "content": "x"}], operation="query")).text
        assert len(await embedder.embed(["x"])) == 1
        await llm.close()
        await embedder.close()
        del llm, embedder
        gc.collect()
        assert reported == []

        leaked = LLMClient(settings, tokenizer)
        await leaked.chat([{"role": "user", "content": "x"}], operation="query")
        del leaked
        gc.collect()
        assert any("Unclosed client session" in message for message in reported)
    finally:
        loop.set_exception_handler(previous)
