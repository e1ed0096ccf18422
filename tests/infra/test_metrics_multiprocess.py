"""Metrics from every process: `python -m app` with WORKERS=2 shares Prometheus multiprocess mode, so
/metrics answers the counts of both server processes whichever one serves it; the directory is emptied at
start. Also the pieces in-process: the exposition in multiprocess mode and the directory preparation."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from prometheus_client.mmap_dict import MmapedDict
from prometheus_client.parser import text_string_to_metric_families

from app.core.metrics import prepare_multiprocess_dir
from tests.support.database import TEST_DIM

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _health_count(text: str) -> float:
    """http_requests_total of successful GET /health in a /metrics answer."""
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = sample.labels
            if (
                sample.name == "http_requests_total"
                and labels.get("route") == "/health"
                and labels.get("method") == "GET"
                and labels.get("status") == "200"
            ):
                return sample.value
    return 0.0


def _per_process(directory: Path) -> dict[str, float]:
    """GET /health 200 count in each process's counter file (named counter_<pid>.db)."""
    counts: dict[str, float] = {}
    for path in directory.glob("counter_*.db"):
        total = 0.0
        for key, value, *_ in MmapedDict.read_all_values_from_file(str(path)):
            if '"http_requests_total"' in key and '"/health"' in key and '"200"' in key:
                total += value
        counts[path.stem.split("_", 1)[1]] = total
    return counts


def _serve(env: dict[str, str], log: Path) -> subprocess.Popen:
    with log.open("wb") as sink:
        return subprocess.Popen([sys.executable, "-m", "app"], cwd=ROOT, env=env, stdout=sink, stderr=sink)


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def test_prepare_empties_a_given_directory_and_creates_a_fresh_one(tmp_path):
    given = tmp_path / "metrics"
    given.mkdir()
    (given / "counter_123.db").write_bytes(b"left over")
    (given / "keep.txt").write_text("not ours")
    directory, created = prepare_multiprocess_dir(given)
    assert (directory, created) == (given, False)
    assert sorted(p.name for p in given.iterdir()) == ["keep.txt"]
    fresh, created = prepare_multiprocess_dir(None)
    try:
        assert created and fresh.is_dir() and not any(fresh.iterdir())
    finally:
        fresh.rmdir()


@pytest.mark.slow  # a real two-process server
async def test_two_server_processes_report_summed_counters(database_url, fake_llm, tmp_path):
    directory = tmp_path / "metrics"
    directory.mkdir()
    (directory / "counter_1.db").write_bytes(b"garbage from an earlier run")  # unreadable unless emptied
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "LLM_BASE_URL": fake_llm.url,
        "LLM_MODEL": "fake-llm",
        "LLM_API_KEY": "k",
        "EMBEDDING_MODEL": "fake-embedding",
        "EMBEDDING_DIM": str(TEST_DIM),
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "WORKERS": "2",
        "WORKER_ENABLED": "false",
        "API_KEYS": "",
        "LOG_LEVEL": "INFO",
        "LOG_FORMAT": "json",
        "PROMETHEUS_MULTIPROC_DIR": str(directory),
    }
    env.pop("prometheus_multiproc_dir", None)
    log = tmp_path / "server.log"
    proc = _serve(env, log)
    base = f"http://127.0.0.1:{port}"
    ok = 0  # every GET /health answered 200, start-up polls included
    try:
        # a new connection per request, so both processes take some of them
        limits = httpx.Limits(max_keepalive_connections=0)
        async with httpx.AsyncClient(base_url=base, timeout=30, limits=limits) as http:
            for _ in range(600):
                try:
                    if (await http.get("/health")).status_code == 200:
                        ok += 1
                        if len(list(directory.glob("counter_*.db"))) >= 2:
                            break
                except httpx.TransportError:
                    pass
                assert proc.poll() is None, log.read_text(errors="replace")
                await asyncio.sleep(0.2)
            else:
                pytest.fail("the server did not start two processes: " + log.read_text(errors="replace"))

            async def one() -> None:
                nonlocal ok
                if (await http.get("/health")).status_code == 200:
                    ok += 1

            # which process accepts a connection is the kernel's choice: an idle one can win many in a row, so
            # ask until both have answered (each batch of 20 at once keeps the first one busy for a moment)
            for _ in range(100):
                await asyncio.gather(*(one() for _ in range(20)))
                if sum(1 for n in _per_process(directory).values() if n > 0) >= 2:
                    break
            served = _per_process(directory)
            assert sum(1 for n in served.values() if n > 0) == 2, served  # both processes answered some
            for _ in range(50):  # a counter is written just after its response is sent
                if _health_count((await http.get("/metrics")).text) == ok:
                    break
                await asyncio.sleep(0.1)
            for _ in range(6):  # whichever process answers /metrics, it reports both
                assert _health_count((await http.get("/metrics")).text) == ok
    finally:
        await asyncio.to_thread(_stop, proc)
    print(f"/health answered {ok} times by processes {served}")
    # LOG_FORMAT=json reaches uvicorn's own loggers in every process, from their first line
    started = [
        json.loads(line) for line in log.read_text(errors="replace").splitlines() if "Started server process" in line
    ]
    assert len(started) == 2 and all(r["logger"] == "uvicorn.error" and r["level"] == "INFO" for r in started)
