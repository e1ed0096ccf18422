"""The update runner takes its rows (the document's, then the update's) before the entity key locks, as a
deletion does; a merge takes its keys first and then only its own pending document's row, which no update
locks. So an update queued on a hub key never closes a cycle: not with the merge holding that key, nor with a
deletion of the document arriving meanwhile (keys first in the runner would deadlock with that deletion)."""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy import select, text

from app.db.tables import chunks, documents, entities
from app.repositories import graph as graph_repo
from tests.ingest.test_document_update_races import settled
from tests.ingest.test_document_updates import document, ingest, make_project, paragraph


async def _waiting_on(app, events: tuple[str, ...]) -> None:
    # generous: before it queues on the key the update extracts its new chunk, slow on a starved machine
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 120
    while loop.time() < deadline:
        async with app.container.db.connect() as conn:
            waiting = await conn.scalar(
                text(
                    "SELECT count(*) FROM pg_stat_activity"
                    " WHERE wait_event = ANY(CAST(:events AS text[])) AND datname = current_database()"
                ),
                {"events": list(events)},
            )
        if waiting:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"nothing waited on {events}")


async def test_update_queued_on_a_held_key_then_deleted_has_no_deadlock(app_client, caplog):
    app = app_client
    await make_project(app)
    await ingest(app, document(10))
    await ingest(app, "Other Person lives elsewhere.", doc_id="other")
    caplog.set_level(logging.WARNING)
    async with app.container.db.engine.connect() as merge:  # a merge holding a key the update needs
        await graph_repo.lock_keys(merge, "p", ["ravensby"])
        put = await app.http.put(
            "/documents/guide", json={"project_id": "p", "text": document(10, {5: paragraph(5, "Ravensby")})}
        )
        assert put.status_code == 202, put.text
        await _waiting_on(app, ("advisory",))  # the update: its rows locked, queued on the key
        # what a merge does next, its own document's row: not one the update holds, so no wait
        await merge.execute(text("SELECT id FROM documents WHERE id = 'other' FOR UPDATE NOWAIT"))
        deleting = asyncio.create_task(app.http.delete("/documents/guide", params={"project_id": "p"}))
        await _waiting_on(app, ("transactionid", "tuple"))  # the deletion: behind the update's rows
        await merge.commit()
    deleted = await deleting
    assert deleted.status_code == 200, deleted.text
    await settled(app)
    assert not [r for r in caplog.records if "deadlock" in r.getMessage()]
    async with app.container.db.connect() as conn:
        assert (await conn.execute(select(documents.c.id))).scalars().all() == ["other"]
        assert set((await conn.execute(select(chunks.c.document_id))).scalars()) == {"other"}
        assert "ravensby" not in set((await conn.execute(select(entities.c.key))).scalars())
