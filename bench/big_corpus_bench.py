"""A corpus 25x the usual: ingest scaling over worker processes, lock waits, query latency growth, bulk costs.

    .venv/bin/python -m bench.big_corpus_bench --scale 1          # ~25 min: three fleets at 4 s per LLM call
    .venv/bin/python -m bench.big_corpus_bench --scale 5 --skip-ingest   # a few minutes: the 1x and 5x graphs
    .venv/bin/python -m bench.big_corpus_bench --scale 5 25 --skip-ingest   # 1x, 5x, 25x: ~20 min on 2 busy cores
    ... --keep-data DIR   # the server's data stays in DIR (databases bulk_1_0, bulk_25_0, ...) for EXPLAIN
    ... --keep-data DIR --reuse   # query the databases a kept run loaded (no COPY, no index builds)
    ... --contexts FILE   # a hash of every context: written if FILE is absent, else compared with it
    ... --shared-buffers 128MB   # the server's shared_buffers (default 2GB; PostgreSQL's own default is 128MB)

Scale 1 = 40 documents x ~3,500 tokens (140k tokens), 4,000 entities, 6,000 relations; scale 25 = 1,000
documents, 3.5M tokens, 100k entities, 150k relations (bench/big_corpus_world.py). At the service's
1,200-token chunks that is ~120 chunks per scale unit (~3,000 at 25x); `--chunk-tokens 32` cuts 3.5M tokens
into 100k+ chunks where a test wants that many chunk rows.

1. Ingest (bench/big_corpus_ingest.py): the first `--ingest-docs` documents of the world through real
   `python -m app.worker` processes (1, 2, 4 by default) against the fake LLM at `--latency` seconds per
   call: documents and tokens per second, scaling against one worker, sampled lock waits, the workers' key
   lock seconds, database size per 1M ingested tokens, VACUUM after the run. With the fleet budget
   (LLM_RPM, when this branch has it) a last run holds the largest fleet to half of what it sent, with the
   fake refusing anything over that per minute: requests over the budget must be 0.
2. Bulk: the graph of scale 1 and of each `--scale` loaded by COPY into their own databases (no LLM), each
   secondary index rebuilt and timed, ANALYZE and VACUUM timed, database size per 1M tokens.
3. Query: `only_need_context` per mode with the keywords given (no LLM call) and a local query embedder,
   `--queries` distinct questions about hub and leaf entities, twice (first pass, then warm): p50/p95 at
   1x and at `--scale`, growth, and the target p95 <= 100 ms at 25x.

Figures on this 2-core machine shared with other work are noisy; the README says under what load they were taken.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import json
import os
import random
import shutil
import signal
import statistics
import tempfile
import time
from pathlib import Path

import asyncpg
from sqlalchemy import text

from app.core.config import Settings
from app.db.engine import Database, EmbeddedPostgres
from app.db.migrate import upgrade_to_head
from app.providers.tokenizer import get_tokenizer
from app.schemas.query import QueryRequest, QueryResponse
from bench import big_corpus_ingest as ingest
from bench.big_corpus_world import DOCS_PER_SCALE, THEMES, Vectors, World, build_world, entity_name, load
from bench.in_process import query_service

MODES = ("local", "global", "hybrid", "mix", "naive")
TARGET_P95_MS = 100.0


class TopicEmbedder:
    """Query-time embeddings near the centroid of the text's topic, the way the loaded vectors were made."""

    def __init__(self, vectors: Vectors) -> None:
        self.vectors = vectors

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return [self.vectors.query(t) for t in texts]

    async def close(self) -> None:
        return None


def _stat(pid: int | str) -> list[str]:
    with open(f"/proc/{pid}/stat") as f:
        stat = f.read()
    return stat[stat.rindex(")") + 2 :].split()


def server_processes(postmaster: int) -> list[int]:
    """The bench's PostgreSQL: the postmaster and its children (Linux /proc)."""
    out = [postmaster]
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if int(_stat(pid)[1]) == postmaster:
                out.append(int(pid))
        except OSError:
            continue
    return out


def server_cpu(pids: list[int]) -> float:
    """CPU seconds used so far by these processes (those gone count 0: compare over a stable pool)."""
    ticks, total = os.sysconf("SC_CLK_TCK"), 0.0
    for pid in pids:
        try:
            fields = _stat(pid)
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def questions(world: World, n: int) -> list[QueryRequest]:
    """Half about hubs (the 1% most connected entities), half about any entity."""
    rng = random.Random(11)
    known = sorted(world.entity_chunks)
    hubs = known[: max(1, len(known) // 100)]
    out = []
    for i in range(n):
        e = rng.choice(hubs if i % 2 else known)
        name, theme = entity_name(e), rng.choice(THEMES)
        out.append(
            QueryRequest(
                project_id="bench",
                query=f"What did {name} do on the {theme}?",
                mode="mix",
                ll_keywords=[name],
                hl_keywords=[theme],
                only_need_context=True,
            )
        )
    return out


def context_hash(response: QueryResponse) -> str:
    """What a change meant to keep results must leave as it was: the context, its references and its prompt."""
    return hashlib.sha256(response.model_dump_json().encode()).hexdigest()[:16]


async def measure_queries(
    url: str, world: World, vectors: Vectors, n: int, modes: list[str], hashes: dict[str, list[str]]
) -> dict[str, dict[str, float]]:
    """p50/p95 per mode; `hashes` gets each mode's context hashes (first pass, question order). The warm pass
    asks every question again: its contexts must equal the first pass's (counted as changed_on_second_asking)."""
    settings = Settings(_env_file=None, embedding_dim=vectors.dim, log_level="WARNING")
    db = Database(url.replace("postgresql://", "postgresql+asyncpg://"), pool_size=4)
    service = query_service(settings, db, TopicEmbedder(vectors))
    asked = questions(world, n + 3)
    out: dict[str, dict[str, float]] = {}
    # The world (several hundred thousand objects at 25x) lives in this process, not in a service's: each
    # full collection walked it (~120 ms) and billed that to whichever query happened to trigger it.
    gc.collect()
    gc.freeze()
    try:
        async with db.connect() as conn:
            backend = await conn.scalar(text("SELECT pg_backend_pid()"))
        postmaster = int(_stat(backend)[1])
        for mode in modes:
            for q in asked[n:]:  # connection warm-up (prepared statements), not measured
                await service.query(q.model_copy(update={"mode": mode}))
            pids = server_processes(postmaster)  # after the warm-up: the pool's connections are open
            passes, cpu, changed = [], [], 0
            for i in range(2):
                times = []
                for q in asked[:n]:
                    server_before, own_before = server_cpu(pids), time.process_time()
                    t0 = time.perf_counter()
                    response = await service.query(q.model_copy(update={"mode": mode}))
                    times.append(1000 * (time.perf_counter() - t0))
                    own = time.process_time() - own_before
                    cpu.append(1000 * (own + server_cpu(pids) - server_before))
                    if i == 0:
                        hashes.setdefault(mode, []).append(context_hash(response))
                    elif context_hash(response) != hashes[mode][len(times) - 1]:
                        changed += 1
                passes.append(times)
            first, warm = passes
            out[mode] = {
                "changed_on_second_asking": changed,
                "p50": statistics.median(first + warm),
                "p95": pct(first + warm, 0.95),
                "p95_first": pct(first, 0.95),
                "p95_warm": pct(warm, 0.95),
                "cpu_p50": statistics.median(cpu),
                "cpu_p95": pct(cpu, 0.95),
            }
    finally:
        gc.unfreeze()
        await service.c.llm.close()
        await db.close()
    return out


async def bulk(admin: asyncpg.Connection, connect: dict, scale: float, args: argparse.Namespace) -> dict:
    count = get_tokenizer().count
    t0 = time.perf_counter()
    world = build_world(scale, args.chunk_tokens, count=count)
    generated = time.perf_counter() - t0
    name = f"bulk_{str(scale).replace('.', '_')}"
    vectors = Vectors(args.dim)
    if args.reuse and await admin.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name):
        url = f"postgresql://{connect['user']}@/{name}?host={connect['host']}"
        db = Database(url.replace("postgresql://", "postgresql+asyncpg://"), pool_size=1)
        try:  # migrations added since the load (an index, say) apply to what is measured
            await upgrade_to_head(db, args.dim)
        finally:
            await db.close()
        print(f"[bulk {scale:g}x] reusing the loaded database {name}", flush=True)
        return {"scale": scale, "reused": True, **await query_figures(url, world, vectors, scale, args)}
    url = await ingest.migrated_database(admin, connect, name, args.dim)
    conn = await asyncpg.connect(**connect, database=name)
    try:
        empty = await conn.fetchval("SELECT pg_database_size(current_database())")
        figures = await load(conn, world, "bench", vectors)
    finally:
        await conn.close()
    figures.update(
        scale=scale,
        generate_seconds=generated,
        tokens=world.tokens,
        documents=len(world.documents),
        chunks=len(world.chunks),
        entities=len(world.entity_chunks),
        relations=len(world.relations),
        empty_bytes=empty,
    )
    print(
        f"[bulk {scale:g}x] {figures['documents']} docs, {world.tokens / 1e6:.2f}M tokens, {figures['chunks']} chunks,"
        f" {figures['entities']} entities, {figures['relations']} relations; generated {generated:.0f}s,"
        f" COPY {figures['copy_seconds']:.0f}s, indexes {sum(figures['index_seconds'].values()):.0f}s,"
        f" ANALYZE {figures['analyze_seconds']:.1f}s, VACUUM {figures['vacuum_seconds']:.1f}s,"
        f" {(figures['database_bytes'] - empty) / 2**20 / (world.tokens / 1e6):.0f} MB per 1M tokens",
        flush=True,
    )
    slow = sorted(figures["index_seconds"].items(), key=lambda kv: -kv[1])[:6]
    print("    slowest index builds: " + ", ".join(f"{k} {v:.1f}s" for k, v in slow), flush=True)
    figures.update(await query_figures(url, world, vectors, scale, args))
    return figures


async def query_figures(url: str, world: World, vectors: Vectors, scale: float, args: argparse.Namespace) -> dict:
    """{"queries": per-mode figures, "hashes": per-mode context hashes}, or {} with --skip-query."""
    if args.skip_query:
        return {}
    hashes: dict[str, list[str]] = {}
    queries = await measure_queries(url, world, vectors, args.queries, args.modes, hashes)
    for mode, q in queries.items():
        print(
            f"    {mode:7} p50 {q['p50']:6.1f} ms  p95 {q['p95']:6.1f} ms  (first pass {q['p95_first']:.1f},"
            f" warm {q['p95_warm']:.1f}); CPU of bench + PostgreSQL per query p50 {q['cpu_p50']:.1f}"
            f" p95 {q['cpu_p95']:.1f} ms; {q['changed_on_second_asking']} contexts changed on the second asking",
            flush=True,
        )
    return {"queries": queries, "hashes": hashes}


def check_contexts(path: Path, bulks: list[dict]) -> None:
    """Write every context hash to `path`, or, when it exists, compare them with it: a change meant to keep
    results must report 0 differing. A question's context depends only on the stored data and the request:
    its query vector is seeded by its text (`Vectors.query`), so runs with other `--modes` or `--queries`
    compare too. Files written before that change (each asking drew another vector) compare with nothing."""
    measured = {format(b["scale"], "g"): b["hashes"] for b in bulks if "hashes" in b}
    if not path.exists():
        path.write_text(json.dumps(measured, indent=1))
        print(f"\ncontext hashes written to {path}")
        return
    known = json.loads(path.read_text())
    print(f"\ncontexts compared with {path}:")
    for scale, modes in measured.items():
        for mode, hashes in modes.items():
            before = known.get(scale, {}).get(mode)
            if before is None:
                print(f"  {scale}x {mode}: not in the file")
                continue
            differ = sum(a != b for a, b in zip(hashes, before, strict=False)) + abs(len(hashes) - len(before))
            print(f"  {scale}x {mode:7} {len(hashes)} contexts, {differ} differ")


def table(ingests: list[dict], bulks: list[dict], doc_tokens: float) -> None:
    print("\n== summary ==")
    if ingests:
        base = next((r["docs_per_s"] for r in ingests if r["workers"] == 1 and not r["budget_rpm"]), None)
        print(
            f"{'workers':>7} {'budget/min':>10} {'docs/s':>7} {'ktok/s':>7} {'x 1 wkr':>7} {'lock wait s':>11}"
            f" {'key wait s':>10} {'over budget':>11} {'MB/1M tok':>9} {'VACUUM s':>8}"
        )
        for r in ingests:
            waits = sum(r["lock_waits"].values())
            key_wait = sum(v for k, v in r["key_locks"].items() if k.endswith("wait"))
            tokens = r["docs"] * doc_tokens
            size = (r["db_bytes"] - r["empty_bytes"]) / 2**20 / max(tokens / 1e6, 1e-9)
            print(
                f"{r['workers']:>7} {r['budget_rpm'] or '-':>10} {r['docs_per_s']:>7.2f}"
                f" {r['docs_per_s'] * doc_tokens / 1000:>7.1f} {r['docs_per_s'] / base if base else 0:>7.2f}"
                f" {waits:>11.1f} {key_wait:>10.1f} {r['over_limit'] if r['budget_rpm'] else '-':>11}"
                f" {size:>9.0f} {r['vacuum_seconds']:>8.2f}"
            )
    loaded = [b for b in bulks if not b.get("reused")]
    if loaded:
        print(
            f"\n{'scale':>5} {'tokens':>7} {'chunks':>7} {'entities':>8} {'relations':>9} {'COPY s':>6}"
            f" {'index s':>7} {'VACUUM s':>8} {'MB/1M tok':>9}"
        )
        for b in loaded:
            size = (b["database_bytes"] - b["empty_bytes"]) / 2**20 / (b["tokens"] / 1e6)
            print(
                f"{b['scale']:>4g}x {b['tokens'] / 1e6:>6.2f}M {b['chunks']:>7} {b['entities']:>8} {b['relations']:>9}"
                f" {b['copy_seconds']:>6.0f} {sum(b['index_seconds'].values()):>7.0f} {b['vacuum_seconds']:>8.1f}"
                f" {size:>9.0f}"
            )
    measured = sorted((b for b in bulks if "queries" in b), key=lambda b: b["scale"])
    if measured:
        print("\nquery context (ms): wall p50 / p95 and CPU p95 (this process + PostgreSQL) per scale")
        heads = "".join(f" {format(b['scale'], 'g') + 'x p50':>9} {'p95':>7} {'CPU p95':>7}" for b in measured)
        print(f"{'mode':7}{heads} {'growth p95':>10} {'p95<=100':>8}")
        for mode in measured[0]["queries"]:
            cells = "".join(
                f" {q['p50']:>9.1f} {q['p95']:>7.1f} {q['cpu_p95']:>7.1f}"
                for q in (b["queries"][mode] for b in measured)
            )
            first, last = measured[0]["queries"][mode]["p95"], measured[-1]["queries"][mode]["p95"]
            verdict = "met" if last <= TARGET_P95_MS else "MISSED"
            print(f"{mode:7}{cells} {last / first:>9.2f}x {verdict:>8}")


async def _start_server(server: EmbeddedPostgres, shared_buffers: str) -> tuple[dict, asyncpg.Connection]:
    """Start the embedded server with `shared_buffers` (a restart when the data directory holds another value)."""
    for attempt in range(2):
        socket_dir = server.start().split("host=")[1].split("&")[0]
        connect = {"host": socket_dir, "user": "postgres"}
        admin = await asyncpg.connect(**connect, database="postgres")
        wanted = await admin.fetchval("SELECT pg_size_bytes($1)", shared_buffers)
        have = await admin.fetchval("SELECT pg_size_bytes(current_setting('shared_buffers'))")
        if wanted == have:
            break
        if attempt:
            raise SystemExit(f"the server did not take shared_buffers {shared_buffers}")
        await admin.execute(f"ALTER SYSTEM SET shared_buffers = '{int(wanted) // 1024}kB'")
        await admin.close()
        server.stop()
    print(f"[server] shared_buffers {shared_buffers}")
    return connect, admin


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--scale", type=float, nargs="+", default=[1.0], help="1 = 40 documents / 140k tokens; 25 = the issue's"
    )
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--latency", type=float, default=4.0, help="seconds per fake LLM call while ingesting")
    parser.add_argument("--ingest-docs", type=int, default=36, help="documents ingested by each fleet")
    parser.add_argument("--queries", type=int, default=40, help="distinct questions per mode")
    parser.add_argument("--dim", type=int, default=384, help="embedding dimension of the bulk-loaded graph")
    parser.add_argument("--chunk-tokens", type=int, default=1200)
    parser.add_argument("--skip-ingest", action="store_true")
    parser.add_argument("--skip-query", action="store_true")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument(
        "--reuse", action="store_true", help="with --keep-data: query the databases already loaded there, skip loading"
    )
    parser.add_argument("--contexts", type=Path, help="context hashes: written if absent, else compared")
    parser.add_argument("--no-budget", action="store_true", help="skip the run under the fleet budget")
    parser.add_argument(
        "--budget-rpm", type=int, help="LLM_RPM = EMBEDDING_RPM of the budget run (default: half the last rate)"
    )
    parser.add_argument("--keep-logs", type=Path, help="copy the workers' logs here")
    parser.add_argument(
        "--shared-buffers",
        default="2GB",
        help="the server's shared_buffers (PostgreSQL's 128MB default keeps evicting the 25x HNSW indexes, ~490MB)",
    )
    parser.add_argument(
        "--keep-data", type=Path, help="keep the bench's PostgreSQL data here (its bulk_* databases) for EXPLAIN"
    )
    args = parser.parse_args()
    if args.reuse and not args.keep_data:
        parser.error("--reuse needs --keep-data DIR (where a kept run loaded its databases)")
    task = asyncio.current_task()
    assert task is not None
    # `timeout` ends a long run with SIGTERM: cancel, so that the workers, the fake and PostgreSQL are stopped
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)

    scratch = tempfile.TemporaryDirectory(prefix="big-corpus-bench-")
    logs = Path(scratch.name) / "logs"
    logs.mkdir()
    fake = ingest.FakeProcess(dim=64)  # first: a failure here leaves no server behind
    server = EmbeddedPostgres(args.keep_data or Path(scratch.name) / "db")
    connect, admin = await _start_server(server, args.shared_buffers)
    ingests: list[dict] = []
    bulks: list[dict] = []
    count = get_tokenizer().count
    try:
        doc_tokens = 0.0
        if not args.skip_ingest:  # the first documents of a world just large enough
            texts = build_world(args.ingest_docs / DOCS_PER_SCALE, count=count).documents[: args.ingest_docs]
            doc_tokens = statistics.mean(map(count, texts))
            print(f"[ingest] {len(texts)} documents of ~{doc_tokens:.0f} tokens, fake LLM {args.latency}s per call")
            for workers in args.workers:
                ingests.append(await ingest.run(admin, connect, fake, texts, workers, args.latency, logs))
                ingest.show(ingests[-1], doc_tokens)
            if not args.no_budget and ingest.budget_available(fake):
                rpm = args.budget_rpm or max(10, int(ingests[-1]["calls_per_min"] / 2))
                ingests.append(
                    await ingest.run(admin, connect, fake, texts, max(args.workers), args.latency, logs, rpm)
                )
                ingest.show(ingests[-1], doc_tokens)
            elif not args.no_budget:
                print("  (no fleet provider budget on this branch: the run under LLM_RPM is skipped)")
        for scale in dict.fromkeys([1.0, *args.scale]):
            bulks.append(await bulk(admin, connect, scale, args))
        table(ingests, bulks, doc_tokens)
        if args.contexts:
            check_contexts(args.contexts, bulks)
    finally:
        fake.stop()
        await admin.close()
        server.stop()
        if args.keep_logs:
            shutil.copytree(logs, args.keep_logs, dirs_exist_ok=True)
        scratch.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
