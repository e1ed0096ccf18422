"""A question asked again gets the same context: in every mode, past the fifth execution of each prepared
statement (where PostgreSQL may switch to a generic plan), and whether the plans are custom or generic.

Runs the big-corpus bench's own query path (its world at a tiny scale, its query embedder, the in-process
query service), which is where contexts were seen to change from one asking to the next: the embedder drew
fresh noise for each asking, so the same question was a different request each time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import asyncpg
import pytest
from sqlalchemy import event

from app.core.config import Settings
from app.db.engine import Database
from app.providers.tokenizer import get_tokenizer
from app.services.query.service import QueryService
from bench.big_corpus_bench import MODES, TopicEmbedder, questions
from bench.big_corpus_world import Vectors, build_world, load
from bench.in_process import query_service
from tests.support.database import TEST_DIM

ASKINGS = 7  # more than the 5 custom plans PostgreSQL makes before it considers a statement's generic plan


@pytest.fixture
async def bench_world(database_url: str) -> AsyncIterator[tuple[str, list]]:
    world = build_world(0.05, chunk_tokens=300, count=get_tokenizer().count)
    conn = await asyncpg.connect(database_url)
    try:
        await load(conn, world, "bench", Vectors(TEST_DIM))
    finally:
        await conn.close()
    yield database_url, questions(world, 3)


@asynccontextmanager
async def bench_service(database_url: str, plan_cache_mode: str = "auto") -> AsyncIterator[QueryService]:
    db = Database(database_url.replace("postgresql://", "postgresql+asyncpg://"), pool_size=2)
    event.listen(db.engine.sync_engine, "connect", _setting("plan_cache_mode", plan_cache_mode))
    service = _service(db)
    try:
        yield service
    finally:
        await service.c.llm.close()
        await db.close()


def _service(db: Database) -> QueryService:
    settings = Settings(_env_file=None, embedding_dim=TEST_DIM, log_level="WARNING")
    return query_service(settings, db, TopicEmbedder(Vectors(TEST_DIM)))


def _setting(name: str, value: str) -> Callable[..., None]:
    def on_connect(dbapi_connection, _record) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute(f"SET {name} = {value}")
        cursor.close()

    return on_connect


async def _context(service: QueryService, question, mode: str) -> str:
    response = await service.query(question.model_copy(update={"mode": mode}))
    return response.model_dump_json()


async def test_a_question_asked_again_gets_the_same_context_in_every_mode(bench_world):
    url, asked = bench_world
    async with bench_service(url) as service:
        for mode in MODES:
            for question in asked:
                first = await _context(service, question, mode)
                assert '"chunks":[]' not in first  # a context worth comparing
                for asking in range(2, ASKINGS + 1):
                    again = await _context(service, question, mode)
                    assert again == first, f"{mode}: {question.query!r} asked {asking} times"


async def test_the_context_does_not_depend_on_custom_or_generic_plans(bench_world):
    url, asked = bench_world
    contexts: dict[str, list[str]] = {}
    for plan_cache_mode in ("force_custom_plan", "force_generic_plan"):
        async with bench_service(url, plan_cache_mode) as service:
            contexts[plan_cache_mode] = [await _context(service, q, mode) for mode in MODES for q in asked]
    assert contexts["force_custom_plan"] == contexts["force_generic_plan"]
