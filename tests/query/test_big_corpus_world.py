"""The big-corpus bench's world and its COPY loader, at a tiny scale."""

from __future__ import annotations

import asyncpg
import pytest

from app.domain.names import entity_key
from app.providers.tokenizer import get_tokenizer
from bench.big_corpus_world import BULK_TABLES, Vectors, build_world, entity_name, load
from tests.support.database import TEST_DIM

SCALE = 0.05  # 2 documents, 200 entities, 300 relations


@pytest.fixture(scope="module")
def world():
    return build_world(SCALE, chunk_tokens=300, count=get_tokenizer().count)


def test_world_is_deterministic_and_every_relation_is_told_in_its_chunk(world):
    again = build_world(SCALE, chunk_tokens=300, count=get_tokenizer().count)
    assert again.documents == world.documents
    assert len(world.documents) == 2 and len(world.relations) == 300
    assert set(world.entity_chunks) == set(range(200))  # every entity has a relation
    chunks = {c.id: c for c in world.chunks}
    for (a, b), chunk_id in world.relations.items():
        assert entity_name(a) in chunks[chunk_id].text and entity_name(b) in chunks[chunk_id].text
    assert all(c.tokens <= 300 for c in world.chunks)
    assert " ".join(c.text for c in world.chunks if c.document == 0) == world.documents[0]
    busiest = max(world.entity_chunks, key=lambda e: len(world.entity_chunks[e]))
    assert busiest < 10  # the weighted end makes the first entities hubs


async def _secondary_indexes(conn: asyncpg.Connection) -> set[str]:
    rows = await conn.fetch(
        "SELECT indexname FROM pg_indexes WHERE tablename = ANY($1::text[]) AND indexname LIKE 'ix_%'",
        list(BULK_TABLES),
    )
    return {r["indexname"] for r in rows}


async def test_load_copies_the_graph_and_rebuilds_every_index(world, database_url):
    conn = await asyncpg.connect(database_url)
    try:
        before = await _secondary_indexes(conn)
        figures = await load(conn, world, "bench", Vectors(TEST_DIM))
        assert await _secondary_indexes(conn) == before
        assert set(figures["index_seconds"]) == before
        assert await conn.fetchval("SELECT count(*) FROM relations WHERE project_id = 'bench'") == 300
        assert await conn.fetchval("SELECT count(*) FROM entities WHERE embedding IS NOT NULL") == 200
        assert await conn.fetchval("SELECT count(*) FROM chunks") == len(world.chunks)
        assert await conn.fetchval("SELECT count(*) FROM relation_sources") == 300
        hub = entity_key(entity_name(0))
        degree = await conn.fetchval("SELECT degree FROM entities WHERE key = $1", hub)
        related = sum(1 for pair in world.relations if 0 in pair)
        assert degree == related
        assert figures["database_bytes"] > 0 and figures["vacuum_seconds"] >= 0
    finally:
        await conn.close()


def test_entity_names_stay_distinct_up_to_the_25x_world():
    assert len({entity_key(entity_name(i)) for i in range(100_000)}) == 100_000
