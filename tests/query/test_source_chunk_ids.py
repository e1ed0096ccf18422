"""Provenance read by queries: an entity's kept source_ids select its chunks, in insertion order."""

from __future__ import annotations

import asyncpg

from app.db.engine import Database, async_url
from app.repositories.retrieval import source_chunk_ids


async def _graph(url: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("INSERT INTO projects (id, name) VALUES ('p', 'p')")
        await conn.executemany(
            "INSERT INTO documents (project_id, id, status, content, content_hash, content_length)"
            " VALUES ('p', $1, $2, 'x', $1, 1)",
            [("d1", "processed"), ("d2", "processed"), ("d3", "processing")],
        )
        await conn.executemany(
            "INSERT INTO chunks (project_id, id, document_id, order_index, tokens, start_token, end_token, content)"
            " VALUES ('p', $1, $2, 0, 1, 0, 1, 'x')",
            [(f"c{i}", "d1" if i < 4 else "d2" if i < 6 else "d3") for i in range(1, 7)],
        )
        entities = [
            ("hub", ["c5", "c1", "c3", "c1"]),  # capped list (a duplicate too): c2 and c4 are not kept
            ("open", []),  # nothing kept: every provenance row counts
            ("fresh", ["c6"]),  # its only chunk belongs to a document still processing
        ]
        await conn.executemany(
            "INSERT INTO entities (project_id, key, name, source_ids) VALUES ('p', $1, $1, $2)", entities
        )
        rows = [("hub", f"c{i}", "d1" if i < 4 else "d2") for i in (4, 1, 2, 5, 3)]
        rows += [("open", "c2", "d1"), ("open", "c1", "d1"), ("fresh", "c6", "d3")]
        await conn.executemany(
            "INSERT INTO entity_sources (project_id, entity_key, chunk_id, document_id) VALUES ('p', $1, $2, $3)",
            rows,
        )
        relations = [("hub", "open", []), ("fresh", "hub", ["c3", "c2"])]  # the second one's list is capped
        await conn.executemany(
            "INSERT INTO relations (project_id, src_key, tgt_key, source_ids) VALUES ('p', $1, $2, $3)", relations
        )
        told = [("hub", "open", "c6", "d3"), ("hub", "open", "c5", "d2"), ("hub", "open", "c1", "d1")]
        told += [("fresh", "hub", "c2", "d1"), ("fresh", "hub", "c4", "d1"), ("fresh", "hub", "c3", "d1")]
        await conn.executemany(
            "INSERT INTO relation_sources (project_id, src_key, tgt_key, chunk_id, document_id)"
            " VALUES ('p', $1, $2, $3, $4)",
            told,
        )
    finally:
        await conn.close()


async def test_kept_source_ids_select_the_chunks_in_insertion_order(database_url: str) -> None:
    await _graph(database_url)
    db = Database(async_url(database_url), pool_size=1)
    try:
        async with db.connect() as conn:
            by_entity, by_pair = await source_chunk_ids(conn, "p", ["hub", "open", "fresh", "missing"], [])
    finally:
        await db.close()
    assert by_entity == {"hub": ["c1", "c5", "c3"], "open": ["c2", "c1"], "fresh": [], "missing": []}
    assert by_pair == {}


async def test_relation_provenance_keeps_its_capped_list_and_processed_documents_only(database_url: str) -> None:
    await _graph(database_url)
    db = Database(async_url(database_url), pool_size=1)
    try:
        async with db.connect() as conn:
            pairs = [("hub", "open"), ("fresh", "hub"), ("a", "b")]
            by_entity, by_pair = await source_chunk_ids(conn, "p", [], pairs)
    finally:
        await db.close()
    assert by_entity == {}
    # c6's document is still processing; c4 is not in the capped list; insertion order otherwise
    assert by_pair == {("hub", "open"): ["c5", "c1"], ("fresh", "hub"): ["c2", "c3"], ("a", "b"): []}
