"""Many worker processes under one provider budget: requests over the budget, and throughput against it.

For 1, 2 and 4 worker processes (`python -m app.worker`, each with LLM_MAX_ASYNC=4 and MAX_PARALLEL_INSERT=3)
ingesting a queue far longer than the run, against the fake LLM (its own process) answering every chat call
after a fixed latency, with LLM_RPM set: the fake plays a provider whose limit is LLM_RPM requests in any
60-second window (sliding) and answers 429 past it. Each run lasts `--seconds` (over 60, so the window is
full at least once) and reports the chat requests per second the fleet sent against the budget's rate, the
requests the fake refused as over its limit (must be 0), the most in any 60 s, and documents finished. A
last run repeats the largest fleet with no budget (LLM_RPM=0), as every release before this one behaved:
each worker bounded only by its own LLM_MAX_ASYNC.

    .venv/bin/python -m bench.budget_bench               # ~5 min: 1, 2, 4 workers under the budget, then 4 without
    .venv/bin/python -m bench.budget_bench --seconds 65 --rpm 900 --latency 0.2 --workers 1 2 4

Figures on a 2-core machine shared with other work are noisy: the workers' CPU, not the budget, may be the
limit with several of them.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import delete, func, insert, select

from app.db.engine import Database, EmbeddedPostgres
from app.db.migrate import upgrade_to_head
from app.db.tables import documents
from app.repositories import projects as projects_repo
from app.services.ingest.intake import content_hash
from bench.fake_process import FakeProcess
from bench.ingest_bench import corpus

ROOT = Path(__file__).resolve().parents[1]
DIM = 64


def spawn_worker(database_url: str, llm_url: str, rpm: int, log: Path) -> subprocess.Popen:
    env = {
        **os.environ,
        "ENV_FILE": "",
        "DATABASE_URL": database_url,
        "LLM_BASE_URL": llm_url,
        "LLM_MODEL": "fake-llm",
        "LLM_API_KEY": "k",
        "EMBEDDING_MODEL": "fake-embedding",
        "EMBEDDING_DIM": str(DIM),
        "LLM_MAX_ASYNC": "4",
        "MAX_PARALLEL_INSERT": "3",
        "WORKER_POLL_INTERVAL": "0.1",
        "WORKER_PORT": "0",
        "LOG_LEVEL": "INFO",
        "LLM_RPM": str(rpm),
    }
    with log.open("wb") as sink:
        return subprocess.Popen([sys.executable, "-m", "app.worker"], cwd=ROOT, env=env, stdout=sink, stderr=sink)


async def enqueue(db: Database, project: str, texts: list[str]) -> None:
    async with db.transaction() as conn:
        await projects_repo.ensure(conn, project, project)
        await conn.execute(
            insert(documents),
            [
                {
                    "project_id": project,
                    "id": f"doc-{content_hash(text)}",
                    "content": text,
                    "content_hash": content_hash(text),
                    "content_length": len(text),
                }
                for text in texts
            ],
        )


async def finished(db: Database, project: str) -> int:
    async with db.connect() as conn:
        count = await conn.scalar(
            select(func.count()).where(documents.c.project_id == project, documents.c.status == "processed")
        )
    return int(count or 0)


async def all_started(logs: list[Path]) -> None:
    """Every worker has logged its start (imports and connections take seconds on a loaded machine)."""
    while not all("started" in log.read_text(errors="replace") for log in logs):  # noqa: ASYNC110 (other processes)
        await asyncio.sleep(0.2)


async def run(
    db: Database,
    url: str,
    fake: FakeProcess,
    workers: int,
    rpm: int,
    limit: int,
    args: argparse.Namespace,
    logs: Path,
) -> dict:
    project = f"w{workers}-rpm{rpm}"
    texts = [f"{text} (run {project})" for text in corpus(args.docs, 1, seed=workers + rpm)]
    paths = [logs / f"{project}-worker{i}.log" for i in range(workers)]
    fleet = [spawn_worker(url, fake.url, rpm, path) for path in paths]
    try:
        await asyncio.wait_for(all_started(paths), 300)
        fake.reset(args.latency)
        fake.rate_limit(limit, 60.0)
        started = time.monotonic()
        await enqueue(db, project, texts)
        await asyncio.sleep(args.seconds)
    finally:
        for worker in fleet:
            worker.terminate()
        for worker in fleet:
            worker.wait(timeout=60)
    elapsed = time.monotonic() - started
    rate = fake.rate()
    async with db.transaction() as conn:  # what the run left unfinished must not be the next run's work
        await conn.execute(delete(documents).where(documents.c.status.in_(("pending", "processing"))))
    return {
        "workers": workers,
        "rpm": rpm,
        "requests": rate["requests"],
        "per_second": rate["requests"] / elapsed,
        "over_limit": rate["over_limit"],
        "most_in_60s": rate["most_in_window"],
        "documents": await finished(db, project),
        "seconds": elapsed,
    }


def show(r: dict, limit: int) -> None:
    budget = f"{r['rpm']}/min = {r['rpm'] / 60:.1f}/s" if r["rpm"] else "none"
    print(
        f"{r['workers']} worker(s), budget {budget:>16}: {r['requests']:5d} chat requests in {r['seconds']:.0f} s"
        f" = {r['per_second']:5.1f}/s, most in 60 s {r['most_in_60s']:5d} (provider limit {limit}),"
        f" refused over the limit {r['over_limit']:4d}, documents {r['documents']}",
        flush=True,
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--rpm", type=int, default=900, help="LLM_RPM, and the fake provider's limit per 60 s")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per fake chat call")
    parser.add_argument("--seconds", type=float, default=65, help="length of each run")
    parser.add_argument("--docs", type=int, default=2000, help="documents queued per run (more than a run finishes)")
    parser.add_argument("--no-unbudgeted", action="store_true", help="skip the run without a budget")
    args = parser.parse_args()

    scratch = tempfile.TemporaryDirectory(prefix="budget-bench-")
    data, logs = Path(scratch.name) / "db", Path(scratch.name) / "logs"
    logs.mkdir(parents=True)
    server = EmbeddedPostgres(data)
    url = server.start()
    db = Database(url, pool_size=2)
    fake = FakeProcess(DIM)
    try:
        await upgrade_to_head(db, DIM)
        plain_url = url.replace("postgresql+asyncpg://", "postgresql://")
        print(f"fake LLM latency {args.latency}s; every worker LLM_MAX_ASYNC=4, MAX_PARALLEL_INSERT=3", flush=True)
        for workers in args.workers:
            show(await run(db, plain_url, fake, workers, args.rpm, args.rpm, args, logs), args.rpm)
        if not args.no_unbudgeted:
            show(await run(db, plain_url, fake, max(args.workers), 0, args.rpm, args, logs), args.rpm)
    finally:
        fake.stop()
        await db.close()
        server.stop()
        scratch.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
