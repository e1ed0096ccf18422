"""Following the pipeline without polling: GET /pipeline/events streams a project's pipeline events and the
progress of its processing documents (through a real uvicorn server), with keep-alive comments while
idle, and resumes after Last-Event-ID. POST /query/stream sends the same keep-alive during a slow retrieval."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator

import httpx

from app.main import create_app
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
            assert {p["stage"] for p in progress} <= {"chunking", "extracting", "merging", "summarising",
                                                      "embedding"}

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
