"""Serve an ASGI app on a free loopback port in a background thread (its own event loop)."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass

import uvicorn


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
