"""Queries whose clients hang up give their LLM slots back at once, through a real uvicorn server on loopback.

With a slow LLM and two slots, more queries than slots are started (JSON, `/query/stream`, `stream=true`;
some still extracting keywords, some already answering) and their connections dropped. The provider requests
in flight are aborted (the fake sees the hang-up), the queued queries give up their places, nothing is
cached, and new work (a query, an ingestion's extraction) gets a slot in well under the slow LLM's latency.
A stream abandoned halfway through its answer stops the provider's stream too.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import asyncpg
import httpx
import pytest
from starlette.types import ASGIApp, Receive, Scope, Send

from app.main import create_app
from app.providers.concurrency import PrioritySemaphore
from tests.support.fakes.openai_server import FakeOpenAI
from tests.support.live_server import LiveServer, serve_in_thread

SLOW = 60.0  # the slow LLM's latency: every wait below is far shorter
PROMPT = 5.0  # "promptly": slots free and new work admitted within this
TEXT = "Alice Walker met Bob Stone in Paris. Bob Stone founded the Paris Observatory with Alice Walker."
KEYWORDS = {"ll_keywords": ["Alice Walker"]}  # given keywords skip extraction: the answer call comes first


@dataclass
class Live:
    server: LiveServer
    http: httpx.AsyncClient
    semaphore: PrioritySemaphore
    fake: FakeOpenAI
    database_url: str

    async def queued_or_running(self, count: int) -> None:
        await until(lambda: self.semaphore.in_use + self.semaphore.waiting == count)

    async def cached_answers(self) -> int:
        conn = await asyncpg.connect(self.database_url)
        try:
            return await conn.fetchval("SELECT count(*) FROM llm_cache WHERE cache_type IN ('query', 'keywords')")
        finally:
            await conn.close()


async def until(condition: Callable[[], bool], within: float = PROMPT) -> float:
    """Seconds until `condition` held; fails after `within` seconds."""
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > within:
            raise AssertionError(f"not within {within}s")
        await asyncio.sleep(0.01)
    return time.monotonic() - started


def _speaking(spec_version: str, app: ASGIApp) -> ASGIApp:
    """The app as served by a server that reports another ASGI spec version for HTTP."""

    async def shim(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope = {**scope, "asgi": {**scope.get("asgi", {}), "spec_version": spec_version}}
        await app(scope, receive, send)

    return shim


@pytest.fixture
async def live(request, make_settings, fake_llm: FakeOpenAI, database_url: str) -> AsyncIterator[Live]:
    app = create_app(make_settings(llm_max_async=2))
    spec_version = getattr(request, "param", None)  # None: what uvicorn reports (2.3)
    server = await asyncio.to_thread(serve_in_thread, _speaking(spec_version, app) if spec_version else app)
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            seeded = await http.post("/documents", json={"documents": [{"text": TEXT}], "wait": True})
            assert seeded.json()["documents"][0]["status"] == "processed"
            yield Live(server, http, app.state.container.llm.semaphore, fake_llm, database_url)
    finally:
        fake_llm.latency = fake_llm.stream_delay = 0  # calls still parked at the fake end now: the server can stop
        await asyncio.to_thread(server.stop)


class Abandoned:
    """A raw HTTP request whose client will hang up without reading the answer."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def send(cls, port: int, path: str, body: dict) -> Abandoned:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        payload = json.dumps(body).encode()
        writer.write(
            f"POST {path} HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(payload)}\r\n\r\n".encode()
            + payload
        )
        await writer.drain()
        return cls(reader, writer)

    async def headers(self) -> str:
        """The status line and headers: an event stream has started (its answer not yet)."""
        return (await self.reader.readuntil(b"\r\n\r\n")).decode()

    async def hang_up(self) -> None:
        self.writer.close()
        await self.writer.wait_closed()


async def _abandon(live: Live, requests: list[tuple[str, dict, bool]]) -> list[Abandoned]:
    """Send the requests one by one, each waiting until it holds or queues for an LLM slot."""
    sent: list[Abandoned] = []
    for index, (path, body, streams_answer) in enumerate(requests):
        request = await Abandoned.send(live.server.port, path, body)
        if streams_answer:
            assert (await request.headers()).startswith("HTTP/1.1 200")
        await live.queued_or_running(index + 1)
        sent.append(request)
    return sent


async def _hang_up_and_measure(live: Live, sent: list[Abandoned], mark: int) -> int:
    """Drop every client; the slots, the queue and the provider must be free promptly, and every provider
    request made for the abandoned queries aborted. Returns how many provider requests they made: the two
    holding the slots, plus any a queued query made with a slot freed just before its own hang-up was seen."""
    assert live.fake.started[mark:] == ["keywords", "query"]  # one per slot, in the order sent
    assert live.fake.in_flight == 2 and live.semaphore.waiting == len(sent) - 2
    for request in reversed(sent):  # queued ones first: usually nobody inherits a slot
        await request.hang_up()
    freed = await until(lambda: live.semaphore.in_use == 0 and live.semaphore.waiting == 0 and live.fake.in_flight == 0)
    print(f"slots, queue and provider free {freed:.3f}s after {len(sent)} clients hung up")
    made = live.fake.started[mark:]
    assert sorted(live.fake.aborted) == sorted(made)  # the provider saw every one of them dropped
    assert await live.cached_answers() == 0  # nothing partial was cached
    return mark + len(made)


def _question(n: int) -> dict:
    return {"query": f"What did Alice Walker and Bob Stone do in Paris? (asked {n})"}


async def test_abandoned_json_queries_free_their_slots_and_a_new_query_gets_one(live: Live):
    mark = len(live.fake.started)
    live.fake.latency = SLOW
    sent = await _abandon(
        live,
        [
            ("/query", _question(0), False),  # extracting keywords
            ("/query", {**_question(1), **KEYWORDS}, False),  # answering
            ("/query", _question(2), False),  # queued behind them
            ("/query", {**_question(3), **KEYWORDS}, False),
            ("/query", _question(4), False),
        ],
    )
    after = await _hang_up_and_measure(live, sent, mark)

    fresh = asyncio.create_task(live.http.post("/query", json=_question(5)))
    admitted = await until(lambda: len(live.fake.started) > after)
    print(f"a new query reached the LLM {admitted:.3f}s after the slots were freed")
    live.fake.latency = 0
    response = await fresh
    assert response.status_code == 200 and "(asked 5)" in response.json()["response"]
    assert live.fake.started[after:] == ["keywords", "query"]  # the abandoned queries never came back


async def test_abandoned_streamed_queries_free_their_slots_and_ingestion_gets_one(live: Live):
    mark = len(live.fake.started)
    live.fake.latency = SLOW
    sent = await _abandon(
        live,
        [
            ("/query/stream", _question(0), False),  # extracting keywords, before the stream starts
            ("/query/stream", {**_question(1), **KEYWORDS}, True),  # streaming the answer
            ("/query", {**_question(2), **KEYWORDS, "stream": True}, True),  # queued behind them
            ("/query/stream", {**_question(3), **KEYWORDS}, True),
            ("/query", {**_question(4), "stream": True}, False),
            ("/query/stream", _question(5), False),
        ],
    )
    after = await _hang_up_and_measure(live, sent, mark)

    added = asyncio.create_task(
        live.http.post("/documents", json={"documents": [{"text": "Carol Hale visited Rome."}], "wait": True})
    )
    admitted = await until(lambda: "extract" in live.fake.started[after:])
    print(f"an ingestion's extraction reached the LLM {admitted:.3f}s after the slots were freed")
    live.fake.latency = 0
    assert (await added).json()["documents"][0]["status"] == "processed"
    assert set(live.fake.started[after:]) <= {"extract", "glean", "summary"}  # no abandoned query came back


@pytest.mark.parametrize("live", [None, "2.4"], indirect=True)  # from 2.4 on, Starlette relies on send failing
async def test_a_stream_abandoned_mid_answer_stops_the_provider_stream_and_frees_its_slot(live: Live):
    live.fake.stream_delay = 0.1
    live.fake.handlers["query"] = lambda messages: "word " * 1000  # 100 s to stream in full
    request = await Abandoned.send(live.server.port, "/query/stream", {**_question(0), **KEYWORDS})
    assert (await request.headers()).startswith("HTTP/1.1 200")
    await request.reader.readuntil(b'"type": "chunk"')  # the answer is under way
    assert live.semaphore.in_use == 1 and live.fake.aborted == []
    await request.hang_up()
    stopped = await until(lambda: live.fake.aborted == ["query"] and live.semaphore.in_use == 0)
    print(f"provider stream dropped and slot free {stopped:.3f}s after the client hung up mid-answer")
