"""Serve an ASGI app on a free loopback port in a background thread (its own event loop)."""

from __future__ import annotations

import itertools
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import uvicorn

from app.core.config import Settings
from app.main import create_app
from tests.support.database import TEMPLATE_DB, TEST_DIM

if TYPE_CHECKING:  # the fakes serve themselves with serve_in_thread from here
    from tests.support.database import PgCluster
    from tests.support.fakes.openai_server import FakeOpenAI


@dataclass
class LiveServer:
    server: uvicorn.Server
    thread: threading.Thread
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)


def serve_in_thread(app, *, lifespan: str = "on", timeout: float = 30.0, loop: str = "asyncio") -> LiveServer:  # noqa: ANN001
    # proto=IPPROTO_TCP so asyncio sets TCP_NODELAY on accepted connections: without it every keep-alive
    # response waits ~40 ms for a delayed ACK (Nagle), which the benchmarks measured as LLM latency
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan=lifespan, loop=loop))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.time() + timeout
    while not server.started:
        if time.time() > deadline or not thread.is_alive():
            raise RuntimeError("live server did not start")
        time.sleep(0.02)
    return LiveServer(server, thread, port)


_DATABASE_NUMBERS = itertools.count()


@contextmanager
def live_app(pg_cluster: PgCluster, fake_server: FakeOpenAI, name: str, **settings: Any) -> Iterator[LiveServer]:
    """The whole app on a loopback port over its own database `name` (cloned from the template) and the fake
    providers, as an outside client sees it; `settings` add to or override the test defaults."""
    name = f"{name}_{next(_DATABASE_NUMBERS)}"  # databases are not dropped (see the end), so never reuse a name
    pg_cluster.server.psql(f'CREATE DATABASE "{name}" TEMPLATE {TEMPLATE_DB}')
    app = create_app(
        Settings(
            **{
                "_env_file": None,
                "database_url": pg_cluster.url(name),
                "llm_base_url": fake_server.url,
                "llm_model": "fake-llm",
                "llm_api_key": "k",
                "llm_max_retries": 0,
                "embedding_model": "fake-embedding",
                "embedding_dim": TEST_DIM,
                "worker_poll_interval": 0.05,
                "log_level": "ERROR",
                **settings,
            }
        )
    )
    server = serve_in_thread(app)
    try:
        yield server
    finally:
        server.stop()
        # The database is left to the cluster's removal at the end of the run: a DROP DATABASE here, from
        # synchronous code, waits for every backend to acknowledge it, and a test database's reset paused
        # mid-COPY in the (not running) event loop never does, so the run hung.
