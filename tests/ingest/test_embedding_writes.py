"""The pipeline's embedding writes take no entity key locks: rows nobody holds are written at once, a row a
merge holds (a hub entity) is written on its own once that merge commits, never overwriting a newer text."""

from __future__ import annotations

import asyncio

from sqlalchemy import select, text, update

from app.db.tables import entities, relations
from tests.ingest.test_pipeline import ingest


async def _hashes(app) -> dict[str, str | None]:
    async with app.container.db.connect() as conn:
        rows = await conn.execute(select(entities.c.key, entities.c.embedded_hash))
        return {k: h for k, h in rows.all()}


async def test_embeddings_are_written_around_a_row_a_merge_holds(settings, start_app, fake_llm):
    app = await start_app(settings)
    [doc] = await ingest(app, ["Uma met Vic in Oslo."])
    async with app.container.db.transaction() as conn:  # new texts: stale embeddings for all three
        await conn.execute(update(entities).values(description=entities.c.description + " Later."))
        await conn.execute(update(relations).values(description=relations.c.description + " Later."))
    before = await _hashes(app)
    finaliser = app.container.worker.pipeline.finaliser
    touched = await finaliser.read_touched("default", doc["id"])

    async with app.container.db.engine.connect() as holder:  # a merge in progress on Uma's row
        await holder.execute(text("SELECT 1 FROM entities WHERE key = 'uma' FOR NO KEY UPDATE"))
        writing = asyncio.create_task(finaliser._embed_graph("default", touched.entities, touched.relations))
        for _ in range(400):
            now = await _hashes(app)
            if now["vic"] != before["vic"] and now["oslo"] != before["oslo"]:
                break
            await asyncio.sleep(0.05)
        assert now["vic"] != before["vic"] and now["oslo"] != before["oslo"]  # written while Uma is held
        assert now["uma"] == before["uma"] and not writing.done()
        await holder.execute(  # the merge changes Uma's text: the vector of the older text is not stored
            update(entities).where(entities.c.key == "uma").values(description="Uma, merged meanwhile.")
        )
        await holder.commit()
    await writing
    assert (await _hashes(app))["uma"] == before["uma"]

    touched = await finaliser.read_touched("default", doc["id"])  # that merge's document embeds its text
    await finaliser._embed_graph("default", touched.entities, touched.relations)
    assert (await _hashes(app))["uma"] != before["uma"]
    async with app.container.db.connect() as conn:
        assert None not in (await conn.execute(select(relations.c.embedded_hash))).scalars().all()
