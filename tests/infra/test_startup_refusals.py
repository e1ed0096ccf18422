"""A start the service must refuse ends with one line that says where the problem is and what to do, never a
traceback: `python -m app` (under uvicorn) and `python -m app.worker` alike."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path

import asyncpg
import pytest

from app.core.config import Settings
from app.core.startup import dimension_mismatch, unreachable_database
from tests.support.database import private_server

ROOT = Path(__file__).resolve().parents[2]


async def _vectors_of(socket_dir: str, dim: int) -> None:
    """What the service reads the stored size from: the entities' embedding column, holding a vector (an empty
    one would be resized to the configured size)."""
    conn = await asyncpg.connect(host=socket_dir, user="postgres", database="postgres")
    try:
        await conn.execute(
            f"CREATE EXTENSION IF NOT EXISTS vector; CREATE TABLE entities (embedding vector({dim})); "
            f"INSERT INTO entities VALUES (array_fill(0.5, ARRAY[{dim}])::vector)"
        )
    finally:
        await conn.close()


def _free_port() -> str:
    with socket.socket() as probe:  # only used if the start were (wrongly) accepted
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


def _start(module: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", module],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PORT": _free_port(), "WORKER_PORT": "0", **env},
    )


@pytest.mark.slow  # an embedded PostgreSQL of its own, and a process per module
@pytest.mark.parametrize("module", ["app", "app.worker"])
def test_a_mismatched_embedding_dim_stops_the_start_with_one_line_naming_data_dir(tmp_path, module):
    server = private_server(tmp_path)
    try:
        asyncio.run(_vectors_of(str(server.get_postmaster_info().socket_dir), 1536))
        run = _start(module, {"DATA_DIR": str(tmp_path), "EMBEDDING_DIM": "768"})
    finally:
        server.cleanup()
    assert run.returncode != 0
    assert "Traceback" not in run.stderr, run.stderr
    lines = [line for line in run.stderr.splitlines() if "EMBEDDING_DIM" in line]
    assert len(lines) == 1, run.stderr
    assert f"DATA_DIR={tmp_path}" in lines[0] and "768" in lines[0] and "1536-dimensional" in lines[0]
    assert "EMBEDDING_DIM=1536" in lines[0] and "new, empty folder" in lines[0]


@pytest.mark.slow  # a process
def test_an_unreachable_database_stops_the_api_start_with_one_line():
    url = "postgresql://someone:secret-password@127.0.0.1:9/nowhere"
    run = _start("app", {"DATABASE_URL": url, "WORKER_ENABLED": "false"})
    assert run.returncode != 0
    assert "Traceback" not in run.stderr, run.stderr
    lines = [line for line in run.stderr.splitlines() if "cannot connect" in line]
    assert len(lines) == 1 and "nowhere at DATABASE_URL (127.0.0.1:9)" in lines[0], run.stderr
    assert "secret-password" not in run.stderr


def test_refusals_name_the_database_without_its_password():
    external = Settings(_env_file=None, database_url="postgresql://u:pw@db.example:6543/rag", embedding_dim=384)
    line = str(dimension_mismatch(external, 1536))
    assert "rag at DATABASE_URL (db.example:6543)" in line and "pw" not in line
    assert "EMBEDDING_DIM=1536" in line and "new, empty database" in line and "\n" not in line
    assert "pw" not in str(unreachable_database(external, OSError("refused")))
