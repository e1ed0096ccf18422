"""The merge's set-based writes (app/repositories/merge_writes.py) and the embedding writes' short batches:
degrees stay exact with the degree trigger left to the caller, provenance keeps its order, and rows an
embedding batch wrote are free again before the next batch."""

from __future__ import annotations

import asyncio

from sqlalchemy import func, select, text, update

from app.db.tables import entities, relations
from app.repositories import graph as graph_repo
from app.repositories import merge_writes
from tests.ingest.test_pipeline import entity, ingest, sources_of


async def _degrees(app) -> tuple[dict[str, int], dict[str, int]]:
    """Stored degrees, and the degrees counted from the relations."""
    async with app.container.db.connect() as conn:
        stored = dict((await conn.execute(select(entities.c.key, entities.c.degree))).all())
        counted: dict[str, int] = dict.fromkeys(stored, 0)
        for src, tgt in (await conn.execute(select(relations.c.src_key, relations.c.tgt_key))).all():
            counted[src] += 1
            counted[tgt] += 1
    return stored, counted


async def test_concurrent_documents_sharing_entities_keep_exact_degrees_and_sources(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(max_parallel_insert=4))
    texts = [f"Tom met Uma on day {i}. Uma called Vic about item {i}. Vic saw Wes{chr(65 + i)}." for i in range(6)]
    responses = await asyncio.gather(*(ingest(app, [t]) for t in texts))
    assert all(r[0]["status"] == "processed" for r in responses)
    stored, counted = await _degrees(app)
    assert stored == counted
    assert stored["vic"] == 1 + 6  # Uma and each document's Wes
    assert len(await sources_of(app, "uma")) == 6
    async with app.container.db.connect() as conn:
        seqs = (await conn.execute(text("SELECT count(DISTINCT seq), count(*) FROM entity_sources"))).one()
    assert seqs[0] == seqs[1]


async def test_an_entity_kept_as_it_is_still_counts_its_new_relations(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(max_source_ids_per_entity=1))  # KEEP: Uma's row stays after doc one
    await ingest(app, ["Uma met Vic."])
    before = await entity(app, "uma")
    await ingest(app, ["Uma met Zed."])
    after = await entity(app, "uma")
    assert after["description"] == before["description"]  # skipped by the KEEP rule
    assert after["degree"] == 2
    stored, counted = await _degrees(app)
    assert stored == counted


async def test_the_degree_trigger_is_on_again_after_the_merge_writes(settings, start_app):
    app = await start_app(settings)
    row = {"name": "", "entity_type": "x", "description": "d", "source_ids": [], "file_paths": [], "truncate": ""}
    async with app.container.db.transaction() as conn:
        await conn.execute(text("INSERT INTO projects (id, name) VALUES ('p', 'p')"))
        await merge_writes.write_merge(
            conn,
            "p",
            [{**row, "key": k, "name": k.title()} for k in ("a", "b", "c")],
            [
                {"src_key": "a", "tgt_key": "b", "keywords": "", "description": "ab", "weight": 1.0}
                | {"source_ids": [], "file_paths": [], "truncate": ""}
            ],
            merge_writes.degrees_added([("a", "b")]),
        )
        await graph_repo.upsert_relations(  # a later write in the same transaction: the trigger counts it
            conn, "p", [{"src_key": "a", "tgt_key": "c", "keywords": "", "description": "ac", "weight": 1.0}]
        )
        degrees = dict((await conn.execute(select(entities.c.key, entities.c.degree))).all())
    assert degrees == {"a": 2, "b": 1, "c": 1}


async def test_rows_of_a_committed_embedding_batch_are_free_during_the_next(settings, start_app, fake_llm, monkeypatch):
    app = await start_app(settings)
    names = [f"Name{chr(65 + i // 26)}{chr(97 + i % 26)}" for i in range(40)]  # 40 entities: three batches
    [doc] = await ingest(app, [" ".join(f"{n} was here." for n in names)])
    async with app.container.db.transaction() as conn:  # stale vectors: all of them are written again
        await conn.execute(update(entities).values(description=entities.c.description + " Later."))
    finaliser = app.container.worker.pipeline.finaliser
    touched = await finaliser.read_touched("default", doc["id"])
    first_key = next(iter(touched.entities))  # the first batch's first row
    free_meanwhile: list[bool] = []
    locking = graph_repo.lock_rows_free_now

    async def lock_and_probe(conn, project_id, keys, pairs):
        if (
            free_meanwhile or not keys or keys[0] != first_key
        ):  # a later batch: can a merge lock the first batch's row now?
            async with app.container.db.engine.connect() as other:
                got = await other.execute(
                    text("SELECT key FROM entities WHERE key = :k FOR NO KEY UPDATE SKIP LOCKED"), {"k": first_key}
                )
                free_meanwhile.append(got.first() is not None)
                await other.rollback()
        return await locking(conn, project_id, keys, pairs)

    monkeypatch.setattr(graph_repo, "lock_rows_free_now", lock_and_probe)
    await finaliser._embed_graph("default", touched.entities, touched.relations)
    assert free_meanwhile and all(free_meanwhile)
    async with app.container.db.connect() as conn:
        missing = await conn.scalar(
            select(func.count()).select_from(entities).where(entities.c.embedded_hash.is_(None))
        )
    assert missing == 0
    assert len(touched.entities) == 40
