"""The standalone worker's /health and /metrics listener: healthy only while its loops run and the database
answers, Prometheus text on /metrics, {detail, code} errors, and wired into `python -m app.worker`."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from app.db.engine import Database
from app.worker.http import WorkerHttp, start_worker_http
from tests.support.faults import until

ROOT = Path(__file__).resolve().parents[2]


async def _listener(container, is_running) -> WorkerHttp:
    listener = WorkerHttp(container, is_running, "test-worker", "127.0.0.1", 0)
    await listener.start()
    return listener


async def test_health_follows_the_worker_loops_and_metrics_are_prometheus_text(make_settings, start_app):
    app = await start_app(make_settings())
    worker = app.container.worker
    running = {"value": True}
    listener = await _listener(app.container, lambda: worker.running and running["value"])
    base = f"http://127.0.0.1:{listener.bound_port}"
    try:
        async with httpx.AsyncClient(base_url=base, timeout=10) as http:
            health = await http.get("/health")
            assert health.status_code == 200, health.text
            body = health.json()
            assert body["status"] == "ok" and body["database"] == "ok"
            assert body["worker"] == {"id": "test-worker", "running": True}

            metrics = await http.get("/metrics")
            assert metrics.status_code == 200
            assert metrics.headers["content-type"].startswith("text/plain")
            assert "pipeline_documents" in metrics.text

            running["value"] = False  # a loop ended
            stopped = await http.get("/health")
            assert stopped.status_code == 503
            assert stopped.json()["status"] == "unavailable" and stopped.json()["worker"]["running"] is False

            missing = await http.get("/nope")
            assert missing.status_code == 404 and missing.json()["code"] == "not_found"
            wrong = await http.post("/health")
            assert wrong.status_code == 405 and wrong.json()["code"] == "method_not_allowed"
            assert wrong.headers["allow"] == "GET, HEAD"
            head = await http.head("/health")
            assert head.status_code == 503 and head.content == b""
    finally:
        await listener.close()


async def test_health_is_unavailable_while_the_database_is_unreachable(make_settings, start_app):
    app = await start_app(make_settings(worker_enabled=False))
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        dead_port = probe.getsockname()[1]
    unreachable = Database(f"postgresql+asyncpg://nobody@127.0.0.1:{dead_port}/none", pool_size=1)
    container = dataclasses.replace(app.container, db=unreachable)
    listener = await _listener(container, lambda: True)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{listener.bound_port}", timeout=10) as http:
            health = await http.get("/health")
        assert health.status_code == 503
        assert health.json()["database"] == "unreachable" and health.json()["status"] == "unavailable"
    finally:
        await listener.close()
        await unreachable.close()


async def test_a_garbled_request_gets_400_and_a_silent_client_is_dropped(make_settings, start_app):
    app = await start_app(make_settings(worker_enabled=False))
    listener = await _listener(app.container, lambda: True)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", listener.bound_port)
        writer.write(b"garbage\r\n\r\n")
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), 10)
        writer.close()
        assert answer.startswith(b"HTTP/1.1 400 ") and b'"code": "bad_request"' in answer
    finally:
        await listener.close()


async def test_port_zero_means_no_listener_and_a_taken_port_is_survived(make_settings, start_app, caplog):
    app = await start_app(make_settings(worker_enabled=False))
    assert await start_worker_http(make_settings(worker_port=0), app.container, lambda: True, "w") is None
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        settings = make_settings(worker_port=port, host="127.0.0.1")
        assert await start_worker_http(settings, app.container, lambda: True, "w") is None
    assert "WORKER_PORT" in caplog.text


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _spawn_worker(database_url: str, llm_url: str, port: int, log: Path) -> subprocess.Popen:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "LLM_BASE_URL": llm_url,
        "LLM_MODEL": "fake-llm",
        "LLM_API_KEY": "k",
        "EMBEDDING_MODEL": "fake-embedding",
        "EMBEDDING_DIM": "64",
        "API_KEYS": "",
        "HOST": "127.0.0.1",
        "WORKER_PORT": str(port),
    }
    with log.open("wb") as sink:
        return subprocess.Popen(
            [sys.executable, "-m", "app.worker"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=sink
        )


@pytest.mark.slow  # a `python -m app.worker` process
async def test_python_m_app_worker_serves_health_and_metrics(database_url, fake_llm, tmp_path):
    port = _free_port()
    log = tmp_path / "worker.log"
    worker = _spawn_worker(database_url, fake_llm.url, port, log)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as http:

            async def healthy() -> bool:
                assert worker.poll() is None, log.read_text()
                try:
                    return (await http.get("/health")).status_code == 200
                except httpx.TransportError:
                    return False

            await until(healthy, limit=60, pause=0.2)
            metrics = await http.get("/metrics")
        assert metrics.status_code == 200 and "pipeline_documents" in metrics.text
    finally:
        worker.send_signal(signal.SIGTERM)
        code = worker.wait(timeout=30)
    assert code == 0, log.read_text()
