"""Ingest throughput of 1, 2, 4 ... worker processes for bench/big_corpus_bench.py, with lock-wait sampling.

Each run gets its own database: the documents are queued with plain INSERTs (as POST /documents leaves them),
then N `python -m app.worker` processes (LLM_MAX_ASYNC=4, MAX_PARALLEL_INSERT=3 each) ingest them against the
fake LLM (its own process) answering every call after a fixed latency. Throughput = documents (and tokens)
per second from the queueing to the last document processed. While they run, a separate connection samples
pg_stat_activity every 100 ms: backends waiting on a heavyweight lock, by wait event (advisory = the
service's entity key locks, transactionid/tuple = row conflicts on hot entities), summed as backend-seconds;
each worker's own pipeline_key_lock_seconds_total (wait/held per step) is read from its /metrics at the end.

With the fleet provider budget (LLM_RPM, branch h37a) and a fake provider that counts requests per minute
and answers 429 past a limit, `budget_run` runs the largest fleet with LLM_RPM below what it would send
and the fake limiting at the same figure: requests refused over the limit must be 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import asyncpg
import httpx

from app.services.ingest.intake import content_hash
from bench.fake_process import FakeProcess

ROOT = Path(__file__).resolve().parents[1]
LOCK_QUERY = """SELECT wait_event, count(*) FROM pg_stat_activity
                WHERE wait_event_type = 'Lock' AND datname = current_database() GROUP BY 1"""


# Row-lock waits (transactionid, tuple) by the waiting statement and the statement its blocker last ran: which
# writers hold rows that a merge (holding its hub keys meanwhile) waits for.
BLOCKERS_QUERY = """SELECT left(regexp_replace(a.query, '\\s+', ' ', 'g'), 40) AS waiter,
                           left(regexp_replace(b.query, '\\s+', ' ', 'g'), 40) AS holder, count(*) AS n
                      FROM pg_stat_activity a CROSS JOIN LATERAL unnest(pg_blocking_pids(a.pid)) AS bp
                      JOIN pg_stat_activity b ON b.pid = bp
                     WHERE a.wait_event IN ('transactionid', 'tuple') AND a.datname = current_database()
                     GROUP BY 1, 2"""


async def migrated_database(admin: asyncpg.Connection, connect: dict, name: str, dim: int) -> str:
    """A new database on the bench's server with the service's schema; its plain postgresql:// URL."""
    from app.db.engine import Database
    from app.db.migrate import upgrade_to_head

    await admin.execute(f"CREATE DATABASE {name}")
    url = f"postgresql://{connect['user']}@/{name}?host={connect['host']}"
    db = Database(url.replace("postgresql://", "postgresql+asyncpg://"), pool_size=1)
    try:
        await upgrade_to_head(db, dim)
    finally:
        await db.close()
    return url


def budget_available(fake: FakeProcess) -> bool:
    """The fleet budget's setting and the fake's per-minute limit exist on this branch."""
    from app.core.config import Settings

    return "llm_rpm" in Settings.model_fields and hasattr(fake, "rate_limit")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def spawn_worker(database_url: str, fake: FakeProcess, port: int, log: Path, extra: dict[str, str]) -> subprocess.Popen:
    env = {
        **os.environ,
        "ENV_FILE": "",
        "DATABASE_URL": database_url,
        "LLM_BASE_URL": fake.url,
        "LLM_MODEL": "fake-llm",
        "LLM_API_KEY": "k",
        "EMBEDDING_MODEL": "fake-embedding",
        "EMBEDDING_DIM": str(fake.dim),
        "LLM_MAX_ASYNC": "4",
        "MAX_PARALLEL_INSERT": "3",
        "WORKER_POLL_INTERVAL": "0.1",
        "WORKER_PORT": str(port),
        "HOST": "127.0.0.1",
        "LOG_LEVEL": "INFO",
        **extra,
    }
    with log.open("wb") as sink:
        return subprocess.Popen([sys.executable, "-m", "app.worker"], cwd=ROOT, env=env, stdout=sink, stderr=sink)


async def _started(logs: list[Path], fleet: list[subprocess.Popen]) -> None:
    while not all("started" in log.read_text(errors="replace") for log in logs):  # noqa: ASYNC110 (other processes)
        if any(p.poll() is not None for p in fleet):
            raise RuntimeError(f"a worker exited at start-up; see {logs}")
        await asyncio.sleep(0.2)


async def _sample_locks(
    conn: asyncpg.Connection, out: dict[str, float], blockers: dict[str, float], stop: asyncio.Event
) -> None:
    while not stop.is_set():
        for row in await conn.fetch(LOCK_QUERY):
            out[row["wait_event"]] = out.get(row["wait_event"], 0.0) + row["count"] * 0.1
        for row in await conn.fetch(BLOCKERS_QUERY):
            pair = f"{row['waiter'].strip()}... behind {row['holder'].strip()}..."
            blockers[pair] = blockers.get(pair, 0.0) + row["n"] * 0.1
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.1)


def _key_lock_seconds(metrics_text: str) -> dict[str, float]:
    out: dict[str, float] = {}
    pattern = r'^pipeline_key_lock_seconds_total\{phase="(\w+)",step="(\w+)"\} ([0-9.e+-]+)$'
    for phase, step, value in re.findall(pattern, metrics_text, re.M):
        out[f"{step} {phase}"] = out.get(f"{step} {phase}", 0.0) + float(value)
    return out


async def run(
    admin: asyncpg.Connection,
    connect: dict,
    fake: FakeProcess,
    texts: list[str],
    workers: int,
    latency: float,
    logs: Path,
    budget_rpm: int = 0,
    give_up_after: float = 1200,
) -> dict:
    """Ingest `texts` with `workers` processes into a fresh database; figures of the run."""
    name = f"ingest_w{workers}_rpm{budget_rpm}"
    url = await migrated_database(admin, connect, name, fake.dim)
    ports = [_free_port() for _ in range(workers)]
    paths = [logs / f"{name}-{i}.log" for i in range(workers)]
    # the fake limits chat and embeddings apart at the same figure, so the fleet budgets both
    extra = {"LLM_RPM": str(budget_rpm), "EMBEDDING_RPM": str(budget_rpm)} if budget_rpm else {}
    fleet = [spawn_worker(url, fake, port, path, extra) for port, path in zip(ports, paths, strict=True)]
    conn = await asyncpg.connect(**connect, database=name)
    watcher = await asyncpg.connect(**connect, database=name)
    empty_bytes = await conn.fetchval("SELECT pg_database_size(current_database())")
    locks: dict[str, float] = {}
    blockers: dict[str, float] = {}
    stop = asyncio.Event()
    try:
        await asyncio.wait_for(_started(paths, fleet), 300)
        fake.reset(latency)
        if budget_rpm:
            fake.rate_limit(budget_rpm, 60.0)  # type: ignore[attr-defined]
        sampler = asyncio.create_task(_sample_locks(watcher, locks, blockers, stop))
        started = time.perf_counter()
        await conn.execute("INSERT INTO projects (id, name) VALUES ('default', 'default') ON CONFLICT DO NOTHING")
        await conn.copy_records_to_table(
            "documents",
            records=[("default", f"doc-{content_hash(t)}", t, content_hash(t), len(t)) for t in texts],
            columns=["project_id", "id", "content", "content_hash", "content_length"],
        )
        deadline = started + give_up_after
        done = 0
        while done < len(texts) and time.perf_counter() < deadline:
            await asyncio.sleep(0.25)
            done = await conn.fetchval("SELECT count(*) FROM documents WHERE status IN ('processed', 'failed')")
        elapsed = time.perf_counter() - started
        stop.set()
        await sampler
        processed = await conn.fetchval("SELECT count(*) FROM documents WHERE status = 'processed'")
        chunks = await conn.fetchval("SELECT count(*) FROM chunks")
        entities = await conn.fetchval("SELECT count(*) FROM entities")
        relations = await conn.fetchval("SELECT count(*) FROM relations")
        db_bytes = await conn.fetchval("SELECT pg_database_size(current_database())")
        vacuum_started = time.perf_counter()
        await conn.execute("VACUUM (ANALYZE)")
        vacuum_seconds = time.perf_counter() - vacuum_started
        key_locks: dict[str, float] = {}
        async with httpx.AsyncClient(timeout=10) as http:
            for port in ports:
                try:
                    text = (await http.get(f"http://127.0.0.1:{port}/metrics")).text
                except httpx.HTTPError:
                    continue
                for k, v in _key_lock_seconds(text).items():
                    key_locks[k] = key_locks.get(k, 0.0) + v
    finally:
        stop.set()
        for worker in fleet:
            worker.terminate()
        for worker in fleet:
            try:
                worker.wait(timeout=60)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
        await conn.close()
        await watcher.close()
    stats = fake.stats()
    rate = fake.rate() if budget_rpm else {}  # type: ignore[attr-defined]
    return {
        "workers": workers,
        "budget_rpm": budget_rpm,
        "docs": processed,
        "seconds": elapsed,
        "docs_per_s": processed / elapsed,
        "chunks": chunks,
        "entities": entities,
        "relations": relations,
        "db_bytes": db_bytes,
        "empty_bytes": empty_bytes,
        "vacuum_seconds": vacuum_seconds,
        "llm_calls": sum(stats["calls"].values()),
        "calls_by_operation": dict(stats["calls"]),
        "calls_per_min": 60 * sum(stats["calls"].values()) / elapsed,
        "llm_floor_s": sum(stats["calls"].values()) * latency / (4 * workers),
        "peak_in_flight": stats["peak_in_flight"],
        "lock_waits": locks,
        "row_lock_blockers": blockers,
        "key_locks": key_locks,
        "over_limit": rate.get("over_limit", 0),
        "most_in_60s": rate.get("most_in_window", 0),
    }


def show(r: dict, doc_tokens: float) -> None:
    waits = ", ".join(f"{k} {v:.1f}" for k, v in sorted(r["lock_waits"].items())) or "none seen"
    keys = ", ".join(f"{k} {v:.1f}" for k, v in sorted(r["key_locks"].items())) or "not read"
    budget = f", LLM_RPM {r['budget_rpm']}" if r["budget_rpm"] else ""
    print(
        f"  {r['workers']} worker(s){budget}: {r['docs']} docs in {r['seconds']:.1f}s = {r['docs_per_s']:.2f} docs/s"
        f" = {r['docs_per_s'] * doc_tokens / 1000:.1f}k tokens/s; {r['llm_calls']} LLM calls"
        f" ({r['calls_per_min']:.0f}/min, peak {r['peak_in_flight']} at once); graph {r['entities']} entities /"
        f" {r['relations']} relations / {r['chunks']} chunks",
        flush=True,
    )
    print(f"      sampled lock waits (backend-seconds by wait event): {waits}")
    by_operation = ", ".join(f"{k} {v}" for k, v in sorted(r["calls_by_operation"].items()))
    # each worker runs LLM_MAX_ASYNC=4 calls at once: the run cannot end before calls x latency / (4 x workers)
    print(f"      LLM calls by operation: {by_operation}; floor at this latency {r['llm_floor_s']:.0f}s")
    top = sorted(r["row_lock_blockers"].items(), key=lambda kv: -kv[1])[:3]
    print(
        "      row-lock waits, most sampled (waiting statement behind the holder's): "
        + "; ".join(f"{k} {v:.1f}" for k, v in top)
        if top
        else "      row-lock waits: none seen"
    )
    print(f"      workers' entity key locks (seconds, summed over workers): {keys}", flush=True)
    if r["budget_rpm"]:
        print(f"      requests refused over the limit: {r['over_limit']}; most in any 60 s: {r['most_in_60s']}")
