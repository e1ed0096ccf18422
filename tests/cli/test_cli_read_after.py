"""The CLI's client echoes the highest `X-Read-After-LSN` the service gave it (read-your-writes behind read
replicas and several API processes), against a loopback HTTP server that labels its answers and records what
each request carried."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from app.cli.client import Connection, ServiceClient

LABELS = {"/write": "1A/00000010", "/older": "0/FFFFFFFF", "/unlabelled": None, "/garbage": "not-a-position"}


class _Recorder(BaseHTTPRequestHandler):
    seen: list[tuple[str, str | None]] = []

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self.seen.append((self.path, self.headers.get("X-Read-After-LSN")))
        self.send_response(200)
        label = LABELS.get(self.path)
        if label:
            self.send_header("X-Read-After-LSN", label)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def service() -> Iterator[str]:
    _Recorder.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_the_highest_position_seen_is_sent_back_with_every_later_request(service: str) -> None:
    with ServiceClient(Connection(url=service, api_key=None, project="default", timeout=10)) as client:
        for path in ("/unlabelled", "/write", "/older", "/garbage", "/unlabelled"):
            client.json("GET", path)
    assert _Recorder.seen == [
        ("/unlabelled", None),  # nothing seen yet: no header
        ("/write", None),
        ("/older", "1A/00000010"),
        ("/garbage", "1A/00000010"),  # a lower position does not replace a higher one
        ("/unlabelled", "1A/00000010"),  # nor does a malformed one
    ]
