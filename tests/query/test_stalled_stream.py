"""A client that stays connected but stops reading its answer stream must not keep the LLM slot.

A real uvicorn server on loopback with one LLM slot; the fake model streams an 8 MB answer, far more than the
socket buffers between the server and a raw-socket client (a 4 KB receive buffer) hold, and that client never
reads. Another query must still get the slot and complete (the answer was read ahead of the client and the slot
freed when the model finished); the stalled client, when it reads at last, gets the whole answer. With a short
STREAM_SEND_TIMEOUT the stalled client is dropped instead: the connection ends without the answer's end.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Callable

import httpx
import pytest
from prometheus_client import REGISTRY

from app.main import create_app
from app.providers.concurrency import PrioritySemaphore
from tests.support.fakes.openai_server import FakeOpenAI, default_query
from tests.support.live_server import LiveServer, serve_in_thread

pytestmark = pytest.mark.slow  # a real uvicorn server and megabytes through loopback

WAIT = 120.0  # generous: only reached when something is broken
TEXT = "Alice Walker met Bob Stone in Paris. Bob Stone founded the Paris Observatory with Alice Walker."
KEYWORDS = {"ll_keywords": ["Alice Walker"]}  # given keywords skip extraction: the answer call comes first
PIECE = "x" * 4000 + " "
LONG = PIECE * 2000  # 8 MB in 2,000 streamed pieces
STALLED = "(the stalled one)"


async def _until(condition: Callable[[], bool]) -> None:
    async with asyncio.timeout(WAIT):
        while not condition():  # noqa: ASYNC110 (state of another thread's server)
            await asyncio.sleep(0.02)


def _answer(messages: list[dict]) -> str:
    return LONG if STALLED in messages[-1]["content"] else default_query(messages)


def _stalled_request(port: int) -> socket.socket:
    """POST /query/stream for the long answer; nothing is ever read (until the test says so)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(WAIT)
    sock.connect(("127.0.0.1", port))
    body = json.dumps({"query": f"What did Alice Walker do? {STALLED}", **KEYWORDS}).encode()
    sock.sendall(
        b"POST /query/stream HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    return sock


def _read_to_eof(sock: socket.socket, stop: bytes | None = None) -> bytes:
    data = bytearray()
    while chunk := sock.recv(1 << 16):
        data += chunk
        if stop is not None and data.endswith(stop):
            break
    return bytes(data)


def _chunk_text(raw: bytes) -> str:
    """The text of the `chunk` events in a chunked SSE body (chunk framing lines are not `data:` lines)."""
    return "".join(
        json.loads(line[6:])["text"] for line in raw.decode().split("\n") if line.startswith('data: {"type": "chunk"')
    )


@pytest.fixture
def serve(make_settings, fake_llm: FakeOpenAI) -> AsyncIterator[Callable]:
    servers: list[LiveServer] = []

    async def _serve(send_timeout: float) -> tuple[LiveServer, PrioritySemaphore]:
        app = create_app(make_settings(llm_max_async=1, stream_send_timeout=send_timeout, log_level="CRITICAL"))
        servers.append(await asyncio.to_thread(serve_in_thread, app))
        async with httpx.AsyncClient(base_url=servers[-1].url, timeout=WAIT) as http:
            seeded = await http.post("/documents", json={"documents": [{"text": TEXT}], "wait": True})
        assert seeded.json()["documents"][0]["status"] == "processed"
        fake_llm.handlers["query"] = _answer
        return servers[-1], app.state.container.llm.semaphore

    yield _serve
    for server in servers:
        server.stop()


async def test_a_client_that_stops_reading_does_not_keep_the_llm_slot(serve, fake_llm: FakeOpenAI):
    live, semaphore = await serve(send_timeout=600)  # so nothing but the read-ahead can free the slot
    async with httpx.AsyncClient(base_url=live.url, timeout=WAIT) as http:
        stalled = await asyncio.to_thread(_stalled_request, live.port)
        try:
            await _until(lambda: "query" in fake_llm.started)  # the long answer is streaming
            other = await http.post("/query", json={"query": "Who founded the Paris Observatory?", **KEYWORDS})
            assert other.status_code == 200 and other.json()["response"]
            assert semaphore.in_use == 0

            raw = await asyncio.to_thread(_read_to_eof, stalled, b"0\r\n\r\n")  # reading at last
        finally:
            stalled.close()
    assert raw.startswith(b"HTTP/1.1 200") and b'"type": "done"' in raw
    assert _chunk_text(raw) == LONG


async def test_a_client_that_stops_reading_is_dropped_after_the_send_timeout(serve, fake_llm: FakeOpenAI):
    dropped_before = REGISTRY.get_sample_value("answer_streams_dropped_total") or 0.0
    live, semaphore = await serve(send_timeout=1)
    async with httpx.AsyncClient(base_url=live.url, timeout=WAIT) as http:
        stalled = await asyncio.to_thread(_stalled_request, live.port)
        try:
            await _until(lambda: (REGISTRY.get_sample_value("answer_streams_dropped_total") or 0) > dropped_before)
            raw = await asyncio.to_thread(_read_to_eof, stalled)  # what was buffered, then the server's close
        finally:
            stalled.close()
        assert semaphore.in_use == 0
        assert (await http.get("/health")).status_code == 200
    assert raw.startswith(b"HTTP/1.1 200") and b'"type": "chunk"' in raw
    assert b'"type": "done"' not in raw and len(raw) < len(LONG)
