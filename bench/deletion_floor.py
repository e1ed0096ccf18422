"""The part of a deletion's time no implementation can avoid, for `bench.batch_delete_bench --floor`.

Deleting documents must make the summary calls its rebuild needs, have the database read the records of
the chunks the rebuild reads, delete the documents (their chunks and provenance cascade) and rewrite the
rebuilt rows with their new text and vectors. The floor is the sum of
- the summary calls replayed as pre-serialised bodies over plain aiohttp, LLM_MAX_ASYNC at a time (no SDK,
  prompt building, parsing or cache work counts), and
- the server's execution time of those reads and writes (EXPLAIN ANALYZE on an untouched copy of the
  project, rolled back: no client work or network counts), the rows written being those the deletion
  wrote in the project where it ran.
Medians of three. The service's own work (planning, prompts, the SDK, decoding, lock and snapshot checks)
comes on top of it.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Sequence

import aiohttp
from sqlalchemy import BindParameter, TextClause, bindparam, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.asyncio import AsyncConnection

from app.container import Container
from app.providers.llm import OPERATION_HEADER
from app.repositories import deletion as deletion_repo

RUNS = 3

_CHUNK_RECORDS = text("""
SELECT c.id, c.extraction_records FROM chunks c
 WHERE c.project_id = :pid AND c.id IN (SELECT chunk_id FROM entity_sources
                                         WHERE project_id = :pid AND entity_key = ANY(CAST(:keys AS text[])))""")
_DELETE_DOCUMENTS = text("DELETE FROM documents WHERE project_id = :pid AND id = ANY(CAST(:ids AS text[]))")
_ENTITY_ROWS = text("""
SELECT key, entity_type, description, source_ids, file_paths, truncate, embedding::text AS vector, embedded_hash
  FROM entities WHERE project_id = :pid AND key = ANY(CAST(:keys AS text[]))""")
_RELATION_ROWS = text("""
SELECT src_key, tgt_key, keywords, description, weight, source_ids, file_paths, truncate,
       embedding::text AS vector, embedded_hash
  FROM relations
 WHERE project_id = :pid
   AND (src_key, tgt_key) IN (SELECT * FROM unnest(CAST(:srcs AS text[]), CAST(:tgts AS text[])))""")


async def replay_calls(url: str, requests: Sequence[dict], concurrency: int) -> float:
    """Median seconds to send these chat requests again, `concurrency` at a time."""
    bodies = [(json.dumps(r["body"]).encode(), r["operation"]) for r in requests]
    slots = asyncio.Semaphore(concurrency)
    async with aiohttp.ClientSession(headers={"content-type": "application/json", "authorization": "Bearer k"}) as s:

        async def post(body: bytes, operation: str) -> None:
            async with (
                slots,
                s.post(f"{url}/chat/completions", data=body, headers={OPERATION_HEADER: operation}) as response,
            ):
                await response.read()

        times = []
        for _ in range(RUNS):
            started = time.perf_counter()
            await asyncio.gather(*(post(body, op) for body, op in bodies))
            times.append(time.perf_counter() - started)
    return statistics.median(times)


async def _explained(conn: AsyncConnection, statement: TextClause, params: dict, *binds: BindParameter) -> float:
    """Server execution seconds of the statement."""
    explained = text(f"EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) {statement.text}").bindparams(*binds)
    plan = (await conn.execute(explained, params)).scalar_one()
    plan = json.loads(plan) if isinstance(plan, str) else plan
    return plan[0]["Execution Time"] / 1000


async def database_floor(c: Container, copy_pid: str, done_pid: str, document_ids: Sequence[str]) -> float:
    """Median server seconds of the deletion's reads and writes, run on `copy_pid` (rolled back), writing the
    rows the same deletion wrote in `done_pid`."""
    ids = list(document_ids)
    async with c.db.connect() as conn:
        keys, pairs = await deletion_repo.keys_of_documents(conn, copy_pid, ids)
        ents = [dict(r) for r in (await conn.execute(_ENTITY_ROWS, {"pid": done_pid, "keys": keys})).mappings()]
        rels = [
            dict(r)
            for r in (
                await conn.execute(
                    _RELATION_ROWS, {"pid": done_pid, "srcs": [p[0] for p in pairs], "tgts": [p[1] for p in pairs]}
                )
            ).mappings()
        ]
    times = []
    for _ in range(RUNS):
        async with c.db.connect() as conn:
            transaction = await conn.begin()
            seconds = await _explained(conn, _CHUNK_RECORDS, {"pid": copy_pid, "keys": keys})
            seconds += await _explained(conn, _DELETE_DOCUMENTS, {"pid": copy_pid, "ids": ids})
            for statement, written in (
                (deletion_repo._REBUILT_ENTITIES, ents),
                (deletion_repo._REBUILT_RELATIONS, rels),
            ):
                if written:
                    seconds += await _explained(
                        conn, statement, {"rows": written, "project_id": copy_pid}, bindparam("rows", type_=JSONB)
                    )
            await transaction.rollback()
        times.append(seconds)
    return statistics.median(times)
