"""A loopback HTTP server speaking Cohere's `/v2/rerank` and Jina's `/v1/rerank`.

Default scoring: the share of query words found in each document (deterministic). Tests can set
`scores` (index → score) to force an order, `latency` to be slow, `fail_status` to answer errors,
and read `hits` (requests received per path) and `peak_in_flight` (most requests answered at once).
"""

from __future__ import annotations

import asyncio
import re
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

_WORD = re.compile(r"\w+")


def overlap_score(query: str, document: str) -> float:
    q = set(_WORD.findall(query.lower()))
    d = set(_WORD.findall(document.lower()))
    return len(q & d) / len(q) if q else 0.0


@dataclass
class FakeRerank:
    latency: float = 0.0
    fail_status: int | None = None
    scores: dict[int, float] | None = None
    hits: Counter = field(default_factory=Counter)
    bodies: list[dict] = field(default_factory=list)
    in_flight: int = 0
    peak_in_flight: int = 0
    port: int = 0
    _server: uvicorn.Server | None = None
    _thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def reset(self) -> None:
        self.latency = 0.0
        self.fail_status = None
        self.scores = None
        self.hits.clear()
        self.bodies.clear()
        self.peak_in_flight = 0

    async def rerank(self, request: Request) -> Response:
        self.hits[request.url.path] += 1
        body = await request.json()
        self.bodies.append(body)
        self.in_flight += 1  # one event loop serves every request: no lock needed
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            if self.latency:
                await asyncio.sleep(self.latency)
        finally:
            self.in_flight -= 1
        if self.fail_status is not None:
            return JSONResponse({"message": "injected failure"}, status_code=self.fail_status)
        documents = body["documents"]
        scored = [
            (i, self.scores.get(i, 0.0) if self.scores is not None else overlap_score(body["query"], d))
            for i, d in enumerate(documents)
        ]
        scored.sort(key=lambda item: -item[1])
        top_n = body.get("top_n") or len(documents)
        results = [{"index": i, "relevance_score": s} for i, s in scored[:top_n]]
        payload: dict = {"results": results}
        if request.url.path.startswith("/v2"):
            payload |= {"id": "rerank-fake", "meta": {"billed_units": {"search_units": 1}}}
        else:
            payload |= {"model": body.get("model"), "usage": {"total_tokens": 1}}
        return JSONResponse(payload)

    def start(self) -> FakeRerank:
        app = Starlette(
            routes=[
                Route("/v2/rerank", self.rerank, methods=["POST"]),
                Route("/v1/rerank", self.rerank, methods=["POST"]),
            ]
        )
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", loop="asyncio"))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        deadline = time.time() + 10
        while not self._server.started and time.time() < deadline:
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5)
