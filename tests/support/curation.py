"""Build small graphs by direct inserts (documents, chunks, entities, relations, provenance) for curation tests,
and hold requests at chosen points (a parked fake-LLM call, a request queued behind another)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, insert, select, text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables import chunks, documents, entities, entity_sources, relation_sources, relations
from app.domain.names import entity_key, sorted_pair
from app.services.graph import gate as curation_gate
from tests.support.fakes.openai_server import default_summary

Ent = tuple[str, str, str, Sequence[str]]  # name, type, description, chunk ids
Rel = tuple[str, str, str, str, float, Sequence[str]]  # a, b, description, keywords, weight, chunk ids


async def seed_graph(
    conn: AsyncConnection,
    project_id: str = "default",
    *,
    docs: dict[str, Sequence[str]] | None = None,
    ents: Sequence[Ent] = (),
    rels: Sequence[Rel] = (),
) -> None:
    """`docs` maps document id → its chunk ids (file path = '<doc>.txt')."""
    chunk_doc: dict[str, str] = {}
    for doc_id, chunk_ids in (docs or {}).items():
        await conn.execute(
            insert(documents).values(
                project_id=project_id,
                id=doc_id,
                status="processed",
                content=f"text of {doc_id}",
                content_hash=f"hash-{doc_id}",
                content_length=10,
                file_path=f"{doc_id}.txt",
            )
        )
        for order, chunk_id in enumerate(chunk_ids):
            chunk_doc[chunk_id] = doc_id
            await conn.execute(
                insert(chunks).values(
                    project_id=project_id,
                    id=chunk_id,
                    document_id=doc_id,
                    order_index=order,
                    tokens=5,
                    start_token=0,
                    end_token=5,
                    content=f"content of {chunk_id}",
                    file_path=f"{doc_id}.txt",
                )
            )
    for name, etype, desc, chunk_ids in ents:
        paths = list(dict.fromkeys(f"{chunk_doc[c]}.txt" for c in chunk_ids))
        await conn.execute(
            insert(entities).values(
                project_id=project_id,
                key=entity_key(name),
                name=name,
                entity_type=etype,
                description=desc,
                source_ids=list(chunk_ids),
                file_paths=paths,
            )
        )
        for c in chunk_ids:
            await conn.execute(
                insert(entity_sources).values(
                    project_id=project_id, entity_key=entity_key(name), chunk_id=c, document_id=chunk_doc[c]
                )
            )
    for a, b, desc, keywords, weight, chunk_ids in rels:
        s, t = sorted_pair(entity_key(a), entity_key(b))
        paths = list(dict.fromkeys(f"{chunk_doc[c]}.txt" for c in chunk_ids))
        await conn.execute(
            insert(relations).values(
                project_id=project_id,
                src_key=s,
                tgt_key=t,
                description=desc,
                keywords=keywords,
                weight=weight,
                source_ids=list(chunk_ids),
                file_paths=paths,
            )
        )
        for c in chunk_ids:
            await conn.execute(
                insert(relation_sources).values(
                    project_id=project_id, src_key=s, tgt_key=t, chunk_id=c, document_id=chunk_doc[c]
                )
            )


async def rows(conn: AsyncConnection, table: Any, project_id: str = "default", order: Sequence[Any] = ()) -> list[dict]:
    query = select(table).where(table.c.project_id == project_id)
    if order:
        query = query.order_by(*order)
    return [dict(r) for r in (await conn.execute(query)).mappings()]


async def count(conn: AsyncConnection, table: Any, project_id: str = "default") -> int:
    return int(await conn.scalar(select(func.count()).select_from(table).where(table.c.project_id == project_id)))


async def entity_row(conn: AsyncConnection, name: str, project_id: str = "default") -> dict | None:
    row = (
        (
            await conn.execute(
                select(entities).where(entities.c.project_id == project_id, entities.c.key == entity_key(name))
            )
        )
        .mappings()
        .first()
    )
    return dict(row) if row else None


async def relation_row(conn: AsyncConnection, a: str, b: str, project_id: str = "default") -> dict | None:
    s, t = sorted_pair(entity_key(a), entity_key(b))
    row = (
        (
            await conn.execute(
                select(relations).where(
                    relations.c.project_id == project_id, relations.c.src_key == s, relations.c.tgt_key == t
                )
            )
        )
        .mappings()
        .first()
    )
    return dict(row) if row else None


async def entity_provenance(conn: AsyncConnection, name: str, project_id: str = "default") -> list[str]:
    result = await conn.execute(
        select(entity_sources.c.chunk_id)
        .where(entity_sources.c.project_id == project_id, entity_sources.c.entity_key == entity_key(name))
        .order_by(entity_sources.c.seq)
    )
    return [r[0] for r in result]


async def relation_provenance(conn: AsyncConnection, a: str, b: str, project_id: str = "default") -> list[str]:
    s, t = sorted_pair(entity_key(a), entity_key(b))
    result = await conn.execute(
        select(relation_sources.c.chunk_id)
        .where(
            relation_sources.c.project_id == project_id,
            relation_sources.c.src_key == s,
            relation_sources.c.tgt_key == t,
        )
        .order_by(relation_sources.c.seq)
    )
    return [r[0] for r in result]


class Parked:
    """A fake-LLM handler (`fake_llm.handlers[op] = Parked(...)`) that holds its calls until `release()`,
    or until `until_arrived` calls have come; after that every call passes. `answer` None: the default
    summary. The fake serves from its own thread, hence threading primitives; `deadline` lets a broken
    interleaving fail its test instead of hanging it."""

    def __init__(self, answer: str | None, *, until_arrived: int | None = None, deadline: float = 20.0) -> None:
        self.answer = answer
        self.until_arrived = until_arrived
        self.deadline = deadline
        self.arrived = 0
        self._lock = threading.Lock()
        self._open = threading.Event()

    async def __call__(self, messages: list[dict]) -> str:
        with self._lock:
            self.arrived += 1
            if self.until_arrived is not None and self.arrived >= self.until_arrived:
                self._open.set()
        ends = time.monotonic() + self.deadline
        while not self._open.is_set() and time.monotonic() < ends:  # noqa: ASYNC110 (set from another thread)
            await asyncio.sleep(0.005)
        return self.answer if self.answer is not None else default_summary(messages)

    def release(self) -> None:
        self._open.set()

    async def wait_arrived(self, count: int = 1) -> None:
        ends = time.monotonic() + self.deadline
        while self.arrived < count:
            assert time.monotonic() < ends, f"{self.arrived} of {count} parked calls arrived"
            await asyncio.sleep(0.005)


# Advisory locks in this test's database only: pg_locks covers the whole server, where the previous test's
# database may still be being reset, its leftover sessions ended (tests/support/database.py).
ADVISORY_HERE = "locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"


async def queued_behind_another(app: Any, task: asyncio.Task, deadline: float = 20.0) -> None:
    """Return once `task` is done or waits behind another request: at an entity gate of this process, or
    on an advisory lock in the database."""
    ends = time.monotonic() + deadline
    while not task.done():
        if any(gate.users > 1 for gate in getattr(curation_gate, "_GATES", {}).values()):
            return
        async with app.container.db.connect() as conn:
            if await conn.scalar(text(f"SELECT count(*) FROM pg_locks WHERE {ADVISORY_HERE} AND NOT granted")):
                return
        assert time.monotonic() < ends, "the request neither finished nor queued"
        await asyncio.sleep(0.01)
