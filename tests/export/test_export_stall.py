"""Export clients that stop reading must not starve the database pool.

A real uvicorn server on loopback with a pool of 2 (+2 overflow) connections: more exports than pool slots are
opened by raw-socket clients that read the response head and then stop reading. While they stall, `/health`
and `GET /documents` answer 200; exports beyond the per-process cap are refused with a 503 + Retry-After; once
the send timeout passes the stalled responses are dropped (the client gets a cut-off body, then EOF) and their
slots free up."""

from __future__ import annotations

import json
import socket
import struct
import time

import asyncpg
import httpx
import pytest
from fastapi import FastAPI

from app.main import create_app
from tests.support.live_server import LiveServer, serve_in_thread

pytestmark = pytest.mark.slow  # a real uvicorn server and send timeouts of seconds

POOL_SIZE = 2  # SQLAlchemy adds as many overflow connections: 4 in all
CAP = 5  # more concurrent exports than pool connections
REQUESTS = CAP + 2
SEND_TIMEOUT = 3.0
ROWS = 10_000  # 10 batches of ~2 MB of JSON: far more than socket buffers (~4 MB) hold
DESCRIPTION = 2000


@pytest.fixture
async def big_url(database_url: str) -> str:
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("INSERT INTO projects (id, name) VALUES ('big', 'big')")
        await conn.execute(
            "INSERT INTO entities (project_id, key, name, entity_type, description) "
            "SELECT 'big', 'e' || lpad(i::text, 6, '0'), 'E' || i, 'T', repeat('d', $1) "
            "FROM generate_series(1, $2) AS i",
            DESCRIPTION,
            ROWS,
        )
    finally:
        await conn.close()
    return database_url


@pytest.fixture
def serve(big_url, make_settings):
    servers = []

    def _serve(send_timeout: float = SEND_TIMEOUT) -> tuple[LiveServer, FastAPI]:
        app = create_app(
            make_settings(
                database_url=big_url,
                db_pool_size=POOL_SIZE,
                export_max_concurrent=CAP,
                export_send_timeout=send_timeout,
                log_level="CRITICAL",
            )
        )
        servers.append(serve_in_thread(app))
        return servers[-1], app

    yield _serve
    for server in servers:
        server.stop()


def _open_export(port: int) -> tuple[socket.socket, int, bytes]:
    """Send GET /export, read the response head, then stop reading (a tiny receive buffer stalls it fast)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(30)
    sock.connect(("127.0.0.1", port))
    sock.sendall(b"GET /export?project_id=big&format=json HTTP/1.1\r\nHost: test\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(1024)
        assert chunk, "connection closed before the response head"
        data += chunk
    status = int(data.split(b" ", 2)[1])
    return sock, status, data


def _complete(sock: socket.socket, head: bytes) -> tuple[dict[str, str], bytes]:
    """The headers and Content-Length body of a short response whose head was read by `_open_export`."""
    raw, _, body = head.partition(b"\r\n\r\n")
    lines = raw.decode("latin-1").split("\r\n")[1:]
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    while len(body) < int(headers["content-length"]):
        body += sock.recv(1024)
    return headers, body


def _read_to_eof(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(1 << 16):
        data += chunk
    return data


def _timed_get(http: httpx.Client, path: str) -> tuple[int, float]:
    started = time.perf_counter()
    status = http.get(path).status_code
    return status, time.perf_counter() - started


def test_stalled_exports_leave_the_pool_free_and_are_dropped_after_the_send_timeout(serve):
    live, app = serve()
    opening = time.perf_counter()
    opened = [_open_export(live.port) for _ in range(REQUESTS)]
    stall_started = time.perf_counter()
    stalled = [(sock, head) for sock, status, head in opened if status == 200]
    refused = [(sock, head) for sock, status, head in opened if status == 503]
    assert len(stalled) == CAP and len(refused) == REQUESTS - CAP

    for sock, head in refused:
        headers, body = _complete(sock, head)
        sock.close()
        assert headers["content-type"] == "application/json" and int(headers["retry-after"]) > 0
        error = json.loads(body)
        assert error["code"] == "export_busy" and "export" in error["detail"]

    with httpx.Client(base_url=live.url, timeout=10) as http:
        health, health_seconds = _timed_get(http, "/health")
        documents, documents_seconds = _timed_get(http, "/documents")
        assert (health, documents) == (200, 200)
        # within the stall the cap is still taken by the stalled exports; on a starved machine the send timeout
        # may have passed by now (counted from the first export's open), and only then may an export get in
        status = http.get("/export", params={"project_id": "big"}).status_code
        assert status == 503 or (status == 200 and time.perf_counter() - opening >= SEND_TIMEOUT)
        print(f"\nduring the stall: /health {health_seconds:.3f}s, /documents {documents_seconds:.3f}s")

    deadline = time.perf_counter() + SEND_TIMEOUT + 15
    while app.state.export_gate.active:
        assert time.perf_counter() < deadline, "stalled exports were never dropped"
        time.sleep(0.02)
    print(
        f"stalled exports all released after {time.perf_counter() - stall_started:.2f}s (send timeout {SEND_TIMEOUT}s)"
    )
    with httpx.Client(base_url=live.url, timeout=10) as http:
        assert http.get("/export").status_code == 200  # the empty default project: a tiny export

    for sock, head in stalled:
        body = head + _read_to_eof(sock)  # what was buffered, then EOF: the server closed the connection
        sock.close()
        print(f"a stalled client got {len(body)} bytes before EOF")
        assert not body.endswith(b"0\r\n\r\n"), "a stalled export was sent in full"
        assert len(body) < ROWS * DESCRIPTION


def test_a_client_hanging_up_mid_download_frees_its_slot_at_once(serve):
    live, app = serve(send_timeout=600)  # so only the hang-up can free the slots
    opened = [_open_export(live.port) for _ in range(CAP)]
    assert [status for _, status, _ in opened] == [200] * CAP
    for sock, _, _ in opened:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # reset, unread data
        sock.close()
    deadline = time.perf_counter() + 15
    while app.state.export_gate.active:
        assert time.perf_counter() < deadline, "a hung-up download kept its export slot"
        time.sleep(0.02)
    with httpx.Client(base_url=live.url, timeout=10) as http:
        assert http.get("/export", params={"format": "json"}).status_code == 200
