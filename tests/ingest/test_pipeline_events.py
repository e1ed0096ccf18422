"""Following the pipeline without polling: GET /pipeline/events streams a project's pipeline events and the
progress of its processing documents (through a real uvicorn server), with keep-alive comments while
idle, and resumes after Last-Event-ID. POST /query/stream sends the same keep-alive during a slow retrieval."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable

import httpx

from app.db.engine import Database, async_url
from app.main import create_app
from app.repositories import documents as docs_repo
from app.repositories import pipeline_events as events_repo
from app.services.ingest.feed import PipelineFeed
from tests.support.live_server import serve_in_thread


async def _next_message(lines: AsyncIterator[str], within: float = 20.0) -> tuple[str | None, str]:
    """(SSE id or None, the `data:` payload or the comment) of the next message."""
    event_id, body = None, None
    deadline = time.monotonic() + within
    while True:
        line = await asyncio.wait_for(anext(lines), max(0.1, deadline - time.monotonic()))
        if line.startswith("id: "):
            event_id = line[4:]
        elif line.startswith("data: "):
            body = line[6:]
        elif line.startswith(":"):
            body = line
        elif line == "" and body is not None:
            return event_id, body


async def test_events_and_progress_stream_with_keep_alive_and_resume(make_settings, fake_llm):
    app = create_app(make_settings(sse_keepalive_interval=0.3, progress_write_interval=0.05))
    server = await asyncio.to_thread(serve_in_thread, app)
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            async with http.stream("GET", "/pipeline/events") as stream:
                assert stream.status_code == 200
                assert stream.headers["content-type"].startswith("text/event-stream")
                lines = stream.aiter_lines()
                assert (await _next_message(lines))[1] == ": keep-alive"  # idle: the proxy still sees traffic
                fake_llm.latency = 0.05
                posted = await http.post("/documents", json={"documents": [{"text": "Uma met Vic in Wells."}]})
                doc_id = posted.json()["documents"][0]["id"]
                events, progress = [], []
                while not any(e["kind"] == "finished" for e in events):
                    event_id, body = await _next_message(lines)
                    if body.startswith(":"):
                        continue
                    payload = json.loads(body)
                    if payload["type"] == "event":
                        assert event_id == str(payload["id"])
                        events.append(payload)
                    elif payload["type"] == "progress":
                        progress.append(payload)
            assert [(e["document_id"], e["kind"]) for e in events] == [(doc_id, "started"), (doc_id, "finished")]
            assert progress and all(p["id"] == doc_id for p in progress)
            assert {p["stage"] for p in progress} <= {"chunking", "extracting", "merging", "summarising", "embedding"}

            resumed_after = str(events[0]["id"])
            async with http.stream("GET", "/pipeline/events", headers={"Last-Event-ID": resumed_after}) as again:
                event_id, body = await _next_message(again.aiter_lines())
            assert event_id == str(events[1]["id"]) and json.loads(body)["kind"] == "finished"

            missing = await http.get("/pipeline/events", params={"project_id": "ghost"})
            assert missing.status_code == 404 and missing.json()["code"] == "project_not_found"
    finally:
        fake_llm.latency = 0
        await asyncio.to_thread(server.stop)


async def test_slow_retrieval_stream_sends_keep_alive_before_the_answer(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(sse_keepalive_interval=0.2))
    ingested = await app.http.post("/documents", json={"documents": [{"text": "Xia met Yuri in Zug."}], "wait": True})
    assert ingested.status_code == 200
    fake_llm.latency = 0.7  # keyword extraction, then the answer, each take longer than the keep-alive interval
    response = await app.http.post("/query/stream", json={"query": "Where did Xia meet Yuri?"})
    assert response.status_code == 200
    body = response.text
    assert body.startswith(": keep-alive\n\n")
    messages = [json.loads(m[6:]) for m in body.split("\n\n") if m.startswith("data: ")]
    assert messages[-1]["type"] == "done" and any(m["type"] == "chunk" for m in messages)

    fake_llm.latency = 0
    quick = await app.http.post("/query/stream", json={"query": "Where did Xia meet Yuri?", "project_id": "ghost"})
    assert quick.status_code == 404  # a retrieval that fails fast still answers with its status


async def _until(condition: Callable[[], bool], within: float = 20.0) -> None:
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        await asyncio.sleep(0.02)


async def _add_events(database_url: str, count: int, project_id: str = "default") -> list[int]:
    """Record `count` pipeline events of made-up documents, as workers would; their ids, oldest first."""
    db = Database(async_url(database_url), pool_size=1)
    try:
        async with db.transaction() as conn:
            before = await events_repo.last_id(conn, project_id)
            await events_repo.add(conn, [(project_id, f"doc-{n}", "started", None) for n in range(count)])
            rows = await events_repo.recent(conn, project_id, limit=count, after=before)
    finally:
        await db.close()
    return [row["id"] for row in rows]


async def _payloads(lines: AsyncIterator[str], count: int, within: float = 30.0) -> list[tuple[str | None, dict]]:
    """The next `count` messages that are not keep-alive comments."""
    found = []
    deadline = time.monotonic() + within
    while len(found) < count:
        event_id, body = await _next_message(lines, deadline - time.monotonic())
        if not body.startswith(":"):
            found.append((event_id, json.loads(body)))
    return found


async def test_resume_pages_forward_through_more_than_200_missed_events(make_settings, database_url):
    server = await asyncio.to_thread(serve_in_thread, create_app(make_settings(progress_write_interval=0.05)))
    try:
        [seen] = await _add_events(database_url, 1)
        missed = await _add_events(database_url, 260)  # the client was away while these happened
        async with (
            httpx.AsyncClient(base_url=server.url, timeout=30) as http,
            http.stream("GET", "/pipeline/events", headers={"Last-Event-ID": str(seen)}) as stream,
        ):
            lines = stream.aiter_lines()
            got = await _payloads(lines, len(missed))
            assert [int(event_id) for event_id, _ in got] == missed  # every one, oldest first
            assert [p["document_id"] for _, p in got] == [f"doc-{n}" for n in range(260)]
            later = await _add_events(database_url, 1)
            assert [int(i) for i, _ in await _payloads(lines, 1)] == later
    finally:
        await asyncio.to_thread(server.stop)


async def test_resume_past_the_kept_log_sends_a_reset_then_follows(make_settings, database_url):
    server = await asyncio.to_thread(serve_in_thread, create_app(make_settings(progress_write_interval=0.05)))
    try:
        [seen] = await _add_events(database_url, 1)
        newest = (await _add_events(database_url, events_repo.KEEP_PER_PROJECT + 50))[-1]  # some are pruned
        async with (
            httpx.AsyncClient(base_url=server.url, timeout=30) as http,
            http.stream("GET", "/pipeline/events", headers={"Last-Event-ID": str(seen)}) as stream,
        ):
            lines = stream.aiter_lines()
            [(reset_id, reset)] = await _payloads(lines, 1)
            assert reset["type"] == "reset" and reset["reason"] == "events_pruned"
            assert reset_id == str(newest)  # a reconnect with this id resumes from here
            later = await _add_events(database_url, 1)
            assert [int(i) for i, _ in await _payloads(lines, 1)] == later
    finally:
        await asyncio.to_thread(server.stop)


async def _refusal(http: httpx.AsyncClient, headers: dict) -> dict:
    """The error body of a stream that must be refused with 429 (read without waiting for a body's end)."""
    async with http.stream("GET", "/pipeline/events", headers=headers) as stream:
        assert stream.status_code == 429
        return json.loads(await stream.aread())


async def test_streams_are_capped_per_key_and_in_all(make_settings):
    settings = make_settings(
        api_keys=["admin", "scoped:default"],
        pipeline_streams_per_key=2,
        pipeline_streams_max=3,
        sse_keepalive_interval=0.2,
    )
    app = create_app(settings)
    server = await asyncio.to_thread(serve_in_thread, app)
    scoped, admin = {"X-API-Key": "scoped"}, {"X-API-Key": "admin"}
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http, contextlib.AsyncExitStack() as open_:
            for headers in (scoped, scoped, admin):
                stream = await open_.enter_async_context(http.stream("GET", "/pipeline/events", headers=headers))
                assert stream.status_code == 200
            refused = await _refusal(http, scoped)
            assert refused["code"] == "too_many_streams" and "PIPELINE_STREAMS_PER_KEY" in refused["detail"]
            assert (await _refusal(http, admin))["code"] == "streams_full"
            hub = app.state.container.pipeline_hub
            assert hub.open_streams == 3
        await _until(lambda: hub.open_streams == 0)  # the streams closed: their places are given back
        async with (
            httpx.AsyncClient(base_url=server.url, timeout=30) as http,
            http.stream("GET", "/pipeline/events", headers=scoped) as again,
        ):
            assert again.status_code == 200
    finally:
        await asyncio.to_thread(server.stop)


async def test_one_poll_per_project_whatever_the_number_of_streams(make_settings, monkeypatch):
    pollers: set[asyncio.Task] = set()
    in_flight = docs_repo.in_flight

    async def recorded(conn, project_id):  # noqa: ANN001, ANN202
        pollers.add(asyncio.current_task())
        return await in_flight(conn, project_id)

    monkeypatch.setattr(docs_repo, "in_flight", recorded)
    server = await asyncio.to_thread(
        serve_in_thread, create_app(make_settings(progress_write_interval=0.02, sse_keepalive_interval=0.1))
    )
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http, contextlib.AsyncExitStack() as open_:
            streams = [await open_.enter_async_context(http.stream("GET", "/pipeline/events")) for _ in range(5)]
            for stream in streams:  # each has been served a while: a stream that polled itself has polled
                assert (await _next_message(stream.aiter_lines()))[1] == ": keep-alive"
            assert len(pollers) == 1
    finally:
        await asyncio.to_thread(server.stop)


async def test_streams_of_a_deleted_project_end_with_the_reason(make_settings):
    app = create_app(make_settings(progress_write_interval=0.05))
    server = await asyncio.to_thread(serve_in_thread, app)
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            assert (await http.post("/projects", json={"id": "doomed"})).status_code == 201
            async with http.stream("GET", "/pipeline/events", params={"project_id": "doomed"}) as stream:
                lines = stream.aiter_lines()
                assert (await http.delete("/projects/doomed")).status_code == 204
                [(_, last)] = await _payloads(lines, 1)
                assert last["type"] == "end" and last["reason"] == "project_deleted"
                assert [line async for line in lines if line] == []  # and the stream ends
        hub = app.state.container.pipeline_hub
        await _until(lambda: hub.open_streams == 0 and not hub.followed_projects)
    finally:
        await asyncio.to_thread(server.stop)


async def test_a_stream_whose_project_goes_before_the_first_poll_still_ends(make_settings, start_app):
    """The project checked, then deleted before the stream's poller first reads: the poller ends unread, and
    the stream must still end with the reason (it waited forever: the test above then failed on
    a fast delete)."""
    app = await start_app(make_settings(progress_write_interval=0.05))
    assert (await app.http.post("/projects", json={"id": "brief"})).status_code == 201
    feed = PipelineFeed(app.container)
    resume = await feed.start("brief", None)
    assert (await app.http.delete("/projects/brief")).status_code == 204

    async def _all() -> list[dict]:
        return [payload async for payload, _ in feed.follow("brief", resume)]

    messages = await asyncio.wait_for(_all(), 20)  # without the fix it never ends
    assert messages == [{"type": "end", "reason": "project_deleted", "detail": "The project was deleted."}]
    assert not app.container.pipeline_hub.followed_projects
