"""A standalone worker started while the database is down waits for it instead of exiting, then works."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import insert, select, text

from app.db.engine import Database, async_url
from app.db.tables import documents
from app.services.ingest.intake import content_hash
from tests.support.faults import dedicated_pg_server, start_pg, stop_pg, until

pytestmark = pytest.mark.slow  # a worker process and a PostgreSQL server of its own

ROOT = Path(__file__).resolve().parents[2]


def _spawn_worker(database_url: str, llm_url: str, log: Path) -> subprocess.Popen:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "LLM_BASE_URL": llm_url,
        "LLM_MODEL": "fake-llm",
        "LLM_API_KEY": "k",
        "EMBEDDING_MODEL": "fake-embedding",
        "EMBEDDING_DIM": "64",
        "WORKER_POLL_INTERVAL": "0.05",
        "API_KEYS": "",
    }
    with log.open("wb") as sink:
        return subprocess.Popen(
            [sys.executable, "-m", "app.worker"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=sink
        )


async def test_worker_waits_for_database_then_processes(fake_llm, tmp_path):
    with dedicated_pg_server("late") as server:
        url = f"postgresql://postgres@/late?host={server.get_postmaster_info().socket_dir}"
        await asyncio.to_thread(stop_pg, server)
        log = tmp_path / "worker.log"
        worker = _spawn_worker(url, fake_llm.url, log)
        db = None
        try:

            async def waiting() -> bool:
                return "unreachable at start-up" in log.read_text()

            await until(waiting, limit=30)
            assert worker.poll() is None, log.read_text()

            await asyncio.to_thread(start_pg, server)
            db = Database(async_url(url))

            async def migrated() -> bool:
                async with db.connect() as conn:
                    return await conn.scalar(text("SELECT to_regclass('documents') IS NOT NULL"))

            await until(migrated, limit=60)
            body = "Nora Vale founded Tidewater Labs in Bergen."
            doc_id = f"doc-{content_hash(body)}"
            async with db.transaction() as conn:
                await conn.execute(
                    insert(documents).values(
                        project_id="default",
                        id=doc_id,
                        content=body,
                        content_hash=content_hash(body),
                        content_length=len(body),
                    )
                )

            async def processed() -> bool:
                async with db.connect() as conn:
                    status = await conn.scalar(select(documents.c.status).where(documents.c.id == doc_id))
                return status == "processed"

            await until(processed, limit=60)
        finally:
            worker.send_signal(signal.SIGTERM)
            code = worker.wait(timeout=30)
            if db is not None:
                await db.close()
        assert code == 0, log.read_text()
