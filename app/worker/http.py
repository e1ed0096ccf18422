"""The standalone worker's small HTTP listener: `GET /health` and `GET /metrics` on HOST:WORKER_PORT.

`python -m app.worker` has no web server of its own, so without this a container health check could not
tell a working worker from a stuck one, and Prometheus could not scrape its pipeline metrics. Plain asyncio,
one request per connection, so the worker gains no web framework.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from app.container import Container
from app.core.config import Settings
from app.services.health import health_report, refresh_pipeline_gauges

log = logging.getLogger(__name__)

MAX_REQUEST_HEAD = 8 * 1024  # request line and headers; a probe sends a few hundred bytes
READ_TIMEOUT = 5.0  # seconds a client may take to send its request head
DATABASE_TIMEOUT = 3.0  # /health answers "unreachable" rather than hang past a probe's own timeout

_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 503: "Service Unavailable"}


class WorkerHttp:
    """Serves the worker's health and metrics. `is_running` says whether the worker's loops are alive."""

    def __init__(
        self, container: Container, is_running: Callable[[], bool], worker_id: str, host: str, port: int
    ) -> None:
        self.container = container
        self.is_running = is_running
        self.worker_id = worker_id
        self.host = host
        self.port = port  # 0 binds a free port (tests); `bound_port` tells which
        self._server: asyncio.Server | None = None

    @property
    def bound_port(self) -> int:
        if self._server is None or not self._server.sockets:
            raise RuntimeError("the worker's HTTP listener is not started")
        return self._server.sockets[0].getsockname()[1]

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.host, self.port, limit=MAX_REQUEST_HEAD)
        log.info("worker %s: /health and /metrics on http://%s:%d", self.worker_id, self.host, self.bound_port)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def health(self) -> tuple[int, dict[str, Any]]:
        try:
            db_ok, report = await asyncio.wait_for(health_report(self.container), DATABASE_TIMEOUT)
        except TimeoutError:
            db_ok, report = False, {"database": "unreachable"}
        running = self.is_running()
        report["worker"] = {"id": self.worker_id, "running": running}
        healthy = db_ok and running
        report["status"] = "ok" if healthy else "unavailable"
        return (200 if healthy else 503), report

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            try:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), READ_TIMEOUT)
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ConnectionError):
                return  # nothing answerable was sent
            status, content_type, body = await self._respond(head)
            reason = _REASONS.get(status, "")
            headers = (
                f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n"
            )
            if status == 405:
                headers += "Allow: GET, HEAD\r\n"
            method = head.split(b" ", 1)[0]
            writer.write(headers.encode("latin-1") + b"\r\n" + (b"" if method == b"HEAD" else body))
            await writer.drain()
        except ConnectionError:
            pass  # the client left first
        except Exception:
            log.exception("worker %s: HTTP listener failed on a request", self.worker_id)
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def _respond(self, head: bytes) -> tuple[int, str, bytes]:
        parts = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/"):
            return _error(400, "malformed HTTP request line", "bad_request")
        method, target = parts[0], parts[1]
        path = target.split("?", 1)[0]
        if path not in ("/health", "/metrics"):
            return _error(404, f"no route {path!r}: this worker serves /health and /metrics", "not_found")
        if method not in ("GET", "HEAD"):
            return _error(405, f"method {method} not allowed", "method_not_allowed")
        if path == "/health":
            status, report = await self.health()
            return status, "application/json", json.dumps(report).encode()
        await refresh_pipeline_gauges(self.container)
        return 200, CONTENT_TYPE_LATEST, generate_latest()


def _error(status: int, detail: str, code: str) -> tuple[int, str, bytes]:
    return status, "application/json", json.dumps({"detail": detail, "code": code}).encode()


async def start_worker_http(
    settings: Settings, container: Container, is_running: Callable[[], bool], worker_id: str
) -> WorkerHttp | None:
    """The listener on HOST:WORKER_PORT, started; None when WORKER_PORT is 0 or the port is taken (the
    worker still runs: several workers on one host each need their own WORKER_PORT)."""
    if settings.worker_port == 0:
        return None
    listener = WorkerHttp(container, is_running, worker_id, settings.bind_host, settings.worker_port)
    try:
        await listener.start()
    except OSError as exc:
        log.error(
            "worker %s: cannot listen on %s:%d (%s); running without /health and /metrics. Set "
            "WORKER_PORT to a free port, or 0 for none",
            worker_id,
            settings.bind_host,
            settings.worker_port,
            exc.strerror or exc,
        )
        return None
    return listener
