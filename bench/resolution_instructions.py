"""What entity resolution costs, counted in instructions: the ingest of `bench.resolution_cost_bench time`, each
run under valgrind's callgrind, counting only while the documents are ingested.

CPU seconds of one ingest vary by about ten percent from run to run on a 2-core machine (how the documents
interleave decides how many lock retries and single-row writes a run makes, and the machine's other work
slows memory access), so `time` needs a dozen rounds to tell a few percent apart, and its figure still moves
from day to day. Instructions executed by the service process vary by about one percent: the same comparison
from two runs per setting, in a few minutes. Counting starts when the first document is posted and stops once
all are processed (`callgrind_control`); the bench polls GET /pipeline every 5 s instead of every 0.1 s, as a
run under valgrind takes some thirty times as long and its polling would otherwise grow with that. The fake
LLM and PostgreSQL are other processes, not counted. Instructions are not time (a cache miss costs more than an
addition), so `time` remains the figure a budget is read against; this one says which change moved the cost.

    .venv/bin/python -m bench.resolution_cost_bench instructions [--runs 2] [--jobs 2] [--warm-up 8] [--base /tmp/base]

Needs valgrind (Debian package `valgrind`, which also installs callgrind_control).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.fake_process import ROOT

WINDOW_FLAG = "--callgrind-window"
_TOTALS = "totals:"


Setting = tuple[str, str, str | None]  # (name, ENTITY_RESOLUTION, the checkout whose service code runs)


def settings_of(args: argparse.Namespace) -> list[Setting]:
    """The settings a cost run compares: off, auto, and auto with the code of `--base` when given."""
    return [("off", "off", None), ("auto", "auto", None)] + ([("base", "auto", args.base)] if args.base else [])


def quality_ingest_args(args: argparse.Namespace, mode: str, app_dir: str | None) -> list[str]:
    """The arguments of bench.resolution_cost_bench for one measured ingest of the quality world."""
    options = ["quality-ingest", "--no-queries", "--docs", str(args.docs), "--resolution", mode]
    options += ["--warm-up", str(args.warm_up)] if args.warm_up is not None else []
    return options + (["--app-dir", app_dir] if app_dir else [])


def window_hooks(args: list[str]) -> list[str]:
    """In a `quality-ingest` run: with WINDOW_FLAG among `args`, counting turned on around the ingest alone and
    the polling slowed; `args` without the flag returned."""
    if WINDOW_FLAG not in args:
        return args
    import bench.quality_bench as quality

    plain = quality._ingest
    quality.POLL_SECONDS = 5.0

    def count(on: bool) -> None:
        switch = ["callgrind_control", "--instr=" + ("on" if on else "off"), str(os.getpid())]
        subprocess.run(switch, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    async def ingest(client: Any, world: Any) -> dict[str, Any]:
        count(True)
        try:
            return await plain(client, world)
        finally:
            count(False)

    quality._ingest = ingest
    return [a for a in args if a != WINDOW_FLAG]


def _counted(mode: str, args: argparse.Namespace, app_dir: str | None) -> int:
    """Instructions of one run's ingest window."""
    with tempfile.TemporaryDirectory(prefix="resolution-instructions-") as tmp:
        out = Path(tmp) / "callgrind.out"
        command = [
            "valgrind",
            "--tool=callgrind",
            "--instr-atstart=no",
            f"--callgrind-out-file={out}",
            sys.executable,
            "-m",
            "bench.resolution_cost_bench",
            *quality_ingest_args(args, mode, app_dir),
            WINDOW_FLAG,
        ]
        subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for line in out.read_text().splitlines():
            if line.startswith(_TOTALS):
                return int(line[len(_TOTALS) :])
    raise RuntimeError("callgrind wrote no totals")


def instructions(args: argparse.Namespace) -> None:
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("instructions: valgrind is not installed (Debian: apt-get install valgrind)")
    settings = settings_of(args)
    counts: dict[str, list[int]] = {name: [] for name, _, _ in settings}
    # the settings of a run side by side (a count hardly depends on what else the machine does)
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for k in range(args.runs):
            started = {name: pool.submit(_counted, mode, args, app_dir) for name, mode, app_dir in settings}
            for name, future in started.items():
                counts[name].append(future.result())
                print(f"run {k + 1} {name:4}: {counts[name][-1] / 1e9:.3f} G instructions", flush=True)
    process = f"after a warm-up on seed {args.warm_up}" if args.warm_up is not None else "each in a fresh process"
    print(f"\ningest of the quality world ({args.docs} documents, {process}), instructions, {args.runs} runs:")
    off = statistics.median(counts["off"])
    for name, values in counts.items():
        spread = f"{min(values) / 1e9:.3f}-{max(values) / 1e9:.3f}"
        mid = statistics.median(values)
        against = "" if name == "off" else f", {100 * (mid / off - 1):+.1f}% against off (budget 10%)"
        print(f"  {name:4}  median {mid / 1e9:.3f} G (range {spread}){against}")
