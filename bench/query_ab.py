"""Query cost of two or more code trees on one kept 25x database, interleaved: a steadier p95 than two separate
runs of bench/big_corpus_bench.py, whose run-to-run spread on a shared machine is as large as the gaps it is
asked to show.

    .venv/bin/python -m bench.query_ab --data DIR --code s15=/tmp/s15 main=. --rounds 8 --askings 2

DIR is a `--keep-data` directory of big_corpus_bench (its database bulk_25_0, loaded by an earlier run). One
server serves every tree. Each tree gets its own Python process (its checkout first on sys.path, this file's
worker code, the questions sent by the parent), so the trees share the machine's load as it comes: within a
round each mode is asked of every tree in turn, and the order of the trees rotates from round to round.

Each round asks its own `--questions` questions (round 1 those of big_corpus_bench, then the next ones its
generator gives), `--askings` times (first pass, then warm, as that bench does): every round starts with
questions its process has never seen, and a tree's caches hold only what earlier rounds left, as in a
service that has been running. Per round, mode and tree: p95 of the wall time and
of the CPU of the tree's process plus PostgreSQL's (schedstat, nanoseconds; /proc/PID/stat counts 10 ms ticks).
The summary gives the median of the rounds' p95 and their spread (min-max). Each tree's context hashes per
question are compared with the first tree's: trees meant to return the same contexts report 0 differing.

No migration is run: trees whose code expects different migration levels must agree on the tables they read
(check that before trusting the figures).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

MODES = ("local", "global", "hybrid", "mix", "naive")
WARMUP = 3  # questions asked per mode before measuring: connections, prepared statements, caches


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def server_cpu(pids: list[int]) -> float:
    """Seconds the processes ran so far (schedstat: nanoseconds; a process gone counts 0)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            continue
    return total / 1e9


async def worker(url: str) -> None:
    """Answer the parent's requests on stdin (one JSON line each) with one JSON line on stdout."""
    import gc
    import hashlib
    import time

    from sqlalchemy import text

    from app.core.config import Settings
    from app.db.engine import Database
    from app.schemas.query import QueryRequest
    from bench.big_corpus_bench import TopicEmbedder, _stat, server_processes
    from bench.big_corpus_world import Vectors
    from bench.in_process import query_service

    out = sys.stdout
    sys.stdout = sys.stderr  # only the replies go to the parent
    setup = json.loads(sys.stdin.readline())
    vectors = Vectors(setup["dim"])
    settings = Settings(_env_file=None, embedding_dim=setup["dim"], log_level="WARNING")
    db = Database(url, pool_size=4)
    service = query_service(settings, db, TopicEmbedder(vectors))
    asked = [QueryRequest(**q) for q in setup["questions"]]
    async with db.connect() as conn:
        backend = await conn.scalar(text("SELECT pg_backend_pid()"))
    postmaster = int(_stat(backend)[1])
    for mode in setup["modes"]:
        for q in asked[:WARMUP]:
            await service.query(q.model_copy(update={"mode": mode}))
    pids = server_processes(postmaster)
    gc.collect()
    gc.freeze()
    import app

    out.write(json.dumps({"app": str(Path(app.__file__).parent)}) + "\n")
    out.flush()
    try:
        for line in sys.stdin:
            request = json.loads(line)
            mode, askings, first = request["mode"], request["askings"], request["first"]
            wall, cpu, hashes = [], [], []
            for asking in range(askings):
                for q in asked[first : first + request["questions"]]:
                    server_before, own_before = server_cpu(pids), time.process_time()
                    t0 = time.perf_counter()
                    response = await service.query(q.model_copy(update={"mode": mode}))
                    wall.append(1000 * (time.perf_counter() - t0))
                    own = time.process_time() - own_before
                    cpu.append(1000 * (own + server_cpu(pids) - server_before))
                    if asking == 0:
                        hashes.append(hashlib.sha256(response.model_dump_json().encode()).hexdigest()[:16])
            out.write(json.dumps({"wall": wall, "cpu": cpu, "hashes": hashes}) + "\n")
            out.flush()
    finally:
        gc.unfreeze()
        await service.c.llm.close()
        await db.close()


class Tree:
    """One code tree's worker process."""

    def __init__(self, label: str, path: Path, url: str, setup: dict) -> None:
        self.label, self.path = label, path
        env = {**os.environ, "PYTHONPATH": str(path), "PYTHONHASHSEED": "0"}
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker", url],
            cwd=path,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.send(setup)

    def send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def reply(self) -> dict:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"the worker of {self.label} ({self.path}) stopped: see its errors above")
        return json.loads(line)

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


def summary(rounds: list[dict], labels: list[str], modes: list[str]) -> None:
    print("\np95 per round (ms), wall / CPU, every asking; the median of the rounds [min-max]; then the same of the")
    print("first asking only (a question not asked before in this process)")
    for mode in modes:
        print(f"\n{mode}")
        for label in labels:
            cells = []
            for suffix in ("", "_first"):
                walls = [r[mode][label]["p95" + suffix] for r in rounds]
                cpus = [r[mode][label]["cpu_p95" + suffix] for r in rounds]
                cells.append(
                    f"wall {statistics.median(walls):6.1f} [{min(walls):.0f}-{max(walls):.0f}]"
                    f" CPU {statistics.median(cpus):6.1f} [{min(cpus):.0f}-{max(cpus):.0f}]"
                )
            walls = [r[mode][label]["p95"] for r in rounds]
            cpus = [r[mode][label]["cpu_p95"] for r in rounds]
            per_round = " ".join(f"{w:.0f}/{c:.0f}" for w, c in zip(walls, cpus, strict=True))
            print(f"  {label:>8}: {cells[0]} | first {cells[1]} | rounds {per_round}")
    print("\npooled: p95 of every round's askings together (ms, wall / CPU); then each tree against the others,")
    print("round by round: the median difference of CPU p95 [min-max] and in how many rounds it was lower")
    for mode in modes:
        cells = []
        for label in labels:
            walls = [x for r in rounds for x in r[mode][label]["wall"]]
            cpus = [x for r in rounds for x in r[mode][label]["cpu"]]
            cells.append(f"{label} {pct(walls, 0.95):.1f} / {pct(cpus, 0.95):.1f}")
        print(f"  {mode:7} " + ", ".join(cells))
        for i, a in enumerate(labels):
            for b in labels[i + 1 :]:
                diffs = [r[mode][a]["cpu_p95"] - r[mode][b]["cpu_p95"] for r in rounds]
                lower = sum(d < 0 for d in diffs)
                print(
                    f"          {a} - {b}: {statistics.median(diffs):+.1f} [{min(diffs):+.0f} to {max(diffs):+.0f}],"
                    f" {a} lower in {lower} of {len(diffs)}"
                )


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        # run as a file: its folder came first on sys.path; the tree's own `bench` and `app` (PYTHONPATH) must win
        sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
        asyncio.run(worker(sys.argv[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="a big_corpus_bench --keep-data directory")
    parser.add_argument("--database", default="bulk_25_0")
    parser.add_argument("--scale", type=float, default=25.0, help="the scale the database was loaded at")
    parser.add_argument("--code", nargs="+", required=True, help="LABEL=PATH of each checkout, the reference first")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--askings", type=int, default=2, help="passes over the questions per round")
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--shared-buffers", default="2GB")
    parser.add_argument("--dim", type=int, default=384, help="embedding dimension of the loaded graph")
    parser.add_argument("--out", type=Path, help="every sample, as JSON")
    parser.add_argument("--summary", type=Path, help="only print the summary of an --out file")
    if "--summary" in sys.argv:
        path = Path(sys.argv[sys.argv.index("--summary") + 1])
        saved = json.loads(path.read_text())
        labels = list(saved["rounds"][0][saved["args"]["modes"][0]])
        summary(saved["rounds"], labels, saved["args"]["modes"])
        return
    args = parser.parse_args()
    trees = {label: Path(path).resolve() for label, path in (item.split("=", 1) for item in args.code)}
    asyncio.run(run(args, trees))


def interleaved(
    url: str, trees: dict[str, Path], setup: dict, args: argparse.Namespace
) -> tuple[list[dict], dict[str, dict[str, list[str]]]]:
    """The rounds' figures (mode → tree → p95s and samples) and each tree's context hashes per mode (first
    asking of every round's questions, in order)."""
    workers: list[Tree] = []
    rounds: list[dict] = []
    first_hashes: dict[str, dict[str, list[str]]] = {}
    try:
        for label, path in trees.items():
            workers.append(Tree(label, path, url, setup))
        for w in workers:
            print(f"[{w.label}] code of {w.reply()['app']}", flush=True)
        labels = [w.label for w in workers]
        for r in range(args.rounds):
            order = workers[r % len(workers) :] + workers[: r % len(workers)]
            figures: dict = {}
            for mode in args.modes:
                for w in order:
                    first = WARMUP + r * args.questions
                    w.send({"mode": mode, "askings": args.askings, "first": first, "questions": args.questions})
                    got = w.reply()
                    first = len(got["hashes"])  # the first asking's samples come first
                    figures.setdefault(mode, {})[w.label] = {
                        "p95": pct(got["wall"], 0.95),
                        "cpu_p95": pct(got["cpu"], 0.95),
                        "p95_first": pct(got["wall"][:first], 0.95),
                        "cpu_p95_first": pct(got["cpu"][:first], 0.95),
                        "p50": statistics.median(got["wall"]),
                        "cpu_p50": statistics.median(got["cpu"]),
                        "wall": got["wall"],
                        "cpu": got["cpu"],
                    }
                    first_hashes.setdefault(w.label, {}).setdefault(mode, []).extend(got["hashes"])
            rounds.append(figures)
            cells = "  ".join(f"{m} " + "/".join(f"{figures[m][lab]['p95']:.0f}" for lab in labels) for m in args.modes)
            print(f"[round {r + 1}] wall p95 ({'/'.join(labels)}): {cells}", flush=True)
    finally:
        for w in workers:
            w.close()
    return rounds, first_hashes


async def run(args: argparse.Namespace, trees: dict[str, Path]) -> None:
    from app.db.engine import EmbeddedPostgres
    from app.providers.tokenizer import get_tokenizer
    from bench.big_corpus_bench import _start_server, questions
    from bench.big_corpus_world import build_world

    world = build_world(args.scale, 1200, count=get_tokenizer().count)
    asked = questions(world, args.rounds * args.questions + WARMUP)
    # warm-up questions first, the measured ones after (the same split as big_corpus_bench's)
    ordered = asked[-WARMUP:] + asked[:-WARMUP]
    del world
    setup = {"dim": args.dim, "modes": args.modes, "questions": [q.model_dump() for q in ordered]}
    server = EmbeddedPostgres(args.data)
    connect, admin = await _start_server(server, args.shared_buffers)
    url = f"postgresql+asyncpg://{connect['user']}@/{args.database}?host={connect['host']}"
    try:
        rounds, first_hashes = interleaved(url, trees, setup, args)
        labels = list(trees)
        summary(rounds, labels, args.modes)
        reference = labels[0]
        print(f"\ncontexts differing from {reference}'s (first asking of every round's questions):")
        for label in labels[1:]:
            cells = []
            for mode in args.modes:
                mine, theirs = first_hashes[label][mode], first_hashes[reference][mode]
                cells.append(f"{mode} {sum(a != b for a, b in zip(mine, theirs, strict=True))}")
            print(f"  {label}: " + ", ".join(cells))
        if args.out:
            args.out.write_text(
                json.dumps(
                    {
                        "args": vars(args) | {"data": str(args.data), "out": str(args.out)},
                        "rounds": rounds,
                        "hashes": first_hashes,
                    }
                )
            )
    finally:
        await admin.close()
        server.stop()


if __name__ == "__main__":
    main()
