"""Idle pipeline event streams against /health: the real app under uvicorn (a subprocess), an embedded
PostgreSQL, the fake LLM.

    .venv/bin/python -m bench.stream_bench [--streams 1000] [--samples 200] [--env NAME=VALUE ...]

/health is timed with no stream open, then --streams GET /pipeline/events are opened with one project-scoped
key (raw sockets, never read after the status line: idle followers), and /health is timed again while they
stay open. Prints how many streams were accepted (200) or refused (429, by code), /health p50/p95/max in
each phase, and the app's CPU use while the streams sat idle. --env adds settings to the app's environment
(e.g. PIPELINE_STREAMS_PER_KEY=1000 to hold the same load under a higher cap).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx

from bench import load_bench
from bench.load_bench import free_port, percentile, start_database, wait_healthy
from tests.support.fakes.openai_server import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
ADMIN, SCOPED = "bench-admin", "bench-scoped"


def start_app(database_url: str, fake: FakeOpenAI, port: int, log: Path, extra: dict[str, str]) -> subprocess.Popen:
    keys = {"API_KEYS": f"{ADMIN},{SCOPED}:default", **extra}
    return load_bench.start_app(database_url, fake, port, log, keys, ("--timeout-graceful-shutdown", "5"))


async def open_stream(port: int) -> tuple[str, asyncio.StreamWriter | None]:
    """Open one follower; its status (and error code when refused), and its socket while it stays open."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError as exc:
        return f"connect failed: {exc.__class__.__name__}", None
    writer.write(f"GET /pipeline/events HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {SCOPED}\r\n\r\n".encode())
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 60)
    except (TimeoutError, OSError, asyncio.IncompleteReadError) as exc:
        writer.close()
        return f"no answer: {exc.__class__.__name__}", None
    status = head.split(b" ", 2)[1].decode()
    if status == "200":
        return status, writer
    body = await asyncio.wait_for(reader.read(4096), 10)
    writer.close()
    try:
        code = json.loads(body.split(b"\r\n\r\n")[-1] or body)["code"]
    except (ValueError, KeyError):
        code = "?"
    return f"{status} {code}", None


async def time_health(client: httpx.AsyncClient, samples: int, pause: float) -> list[float]:
    timings = []
    for _ in range(samples):
        started = time.perf_counter()
        (await client.get("/health")).raise_for_status()
        timings.append(1000 * (time.perf_counter() - started))
        await asyncio.sleep(pause)
    return timings


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def show(label: str, timings: list[float]) -> None:
    print(
        f"/health {label:28} n={len(timings):4d}  p50 {percentile(timings, 50):8.1f} ms  "
        f"p95 {percentile(timings, 95):8.1f} ms  max {max(timings):8.1f} ms"
    )


async def main(args: argparse.Namespace) -> None:
    extra = dict(item.split("=", 1) for item in args.env)
    root = Path(tempfile.mkdtemp(prefix="lrs-streams-"))
    fake = FakeOpenAI(dim=64).start()
    server, database_url = start_database(root)
    port = free_port()
    proc = start_app(database_url, fake, port, root / "app.log", extra)
    writers: list[asyncio.StreamWriter] = []
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=120) as client:
            await wait_healthy(client, proc)
            show("with no stream open", await time_health(client, args.samples, args.pause))
            opened = await asyncio.gather(*(open_stream(port) for _ in range(args.streams)))
            writers = [w for _, w in opened if w is not None]
            print(f"{args.streams} streams asked for with one scoped key: {dict(Counter(s for s, _ in opened))}")
            await asyncio.sleep(args.settle)
            cpu_before, wall_before = cpu_seconds(proc.pid), time.monotonic()
            timings = await time_health(client, args.samples, args.pause)
            cpu = (cpu_seconds(proc.pid) - cpu_before) / (time.monotonic() - wall_before)
            show(f"with {len(writers)} idle streams", timings)
            print(f"app CPU while they sat idle: {100 * cpu:.0f}% of one core")
    finally:
        for writer in writers:
            writer.close()
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        fake.stop()
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=200, help="/health requests timed in each phase")
    parser.add_argument("--pause", type=float, default=0.05, help="seconds between two timed /health requests")
    parser.add_argument("--settle", type=float, default=3.0, help="seconds between opening the streams and timing")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="an extra app setting")
    asyncio.run(main(parser.parse_args()))
