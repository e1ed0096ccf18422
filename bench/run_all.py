"""Every benchmark (issue 8's and the retrieval-quality one), one after the other, each in its own process
(peak RSS is per process).

    .venv/bin/python -m bench.run_all [--quick]

--quick uses smaller sizes (minutes instead of ~15 on 2 cores); the README's "Benchmarks" section lists
the single commands and the targets.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

FULL = [
    ["bench.ingest_bench", "overhead"],
    ["bench.ingest_bench", "llm-bound"],
    ["bench.ingest_bench", "memory"],
    ["bench.query_bench"],
    ["bench.query_bench", "--entities", "100000", "--relations", "200000", "--chunks", "50000"],
    ["bench.delete_bench", "--docs", "1000"],
    ["bench.update_bench", "--large"],
    ["bench.export_bench", "--entities", "100000", "--relations", "200000", "--formats", "json,csv"],
    ["bench.quality_bench"],
]
QUICK = [
    ["bench.ingest_bench", "overhead", "--docs", "60"],
    ["bench.ingest_bench", "llm-bound", "--docs", "40"],
    ["bench.ingest_bench", "memory", "--big-tokens", "20000"],
    ["bench.query_bench", "--runs", "20"],
    ["bench.delete_bench", "--docs", "1000"],
    ["bench.update_bench"],
    ["bench.export_bench", "--entities", "10000", "--relations", "20000", "--formats", "json"],
    ["bench.quality_bench", "--docs", "40", "--entities", "120"],
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    failed = []
    for command in QUICK if args.quick else FULL:
        line = " ".join(["python -m", *command])
        print(f"\n### {line}", flush=True)
        started = time.perf_counter()
        code = subprocess.call([sys.executable, "-m", *command])
        print(f"### exit {code} after {time.perf_counter() - started:.0f}s", flush=True)
        if code:
            failed.append(line)
    if failed:
        sys.exit(f"failed: {failed}")


if __name__ == "__main__":
    main()
