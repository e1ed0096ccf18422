"""Updates racing deletions and queries: a query sees one version or the other, a deletion wins cleanly."""

from __future__ import annotations

import asyncio

from sqlalchemy import func, select

from app.db.tables import chunks, documents, entities, relations
from tests.ingest.test_document_updates import NAMES, PLACES, ask, document, ingest, make_project, paragraph


async def count(app, table) -> int:
    async with app.container.db.connect() as conn:
        return int(await conn.scalar(select(func.count()).select_from(table).where(table.c.project_id == "p")) or 0)


async def settled(app) -> None:
    for _ in range(400):
        async with app.container.db.connect() as conn:
            busy = await conn.scalar(
                select(func.count())
                .select_from(documents)
                .where(documents.c.project_id == "p", documents.c.status.in_(("pending", "processing")))
            )
        if not busy:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("documents still queued")


async def test_queries_during_an_update_see_one_version_never_both(app_client, fake_llm):
    app = app_client
    await make_project(app)
    await ingest(app, document(10))
    fake_llm.latency = 0.3  # the update's extraction takes a while: queries run meanwhile (none calls the LLM)
    question = f"Where does {NAMES[5]} keep the old lighthouse records?"
    response = await app.http.put(
        "/documents/guide", json={"project_id": "p", "text": document(10, {5: paragraph(5, "Ravensby")})}
    )
    assert response.status_code == 202
    seen = []
    while True:
        context = await ask(app, "naive", question)
        seen.append((PLACES[5] in context, "Ravensby" in context))
        doc = (await app.http.get("/documents/guide@v2", params={"project_id": "p"})).json()
        if doc["status"] == "processed":
            break
        await asyncio.sleep(0.01)
    assert all(old != new for old, new in seen), [s for s in seen if s != (True, False)]
    final = await ask(app, "naive", question)
    assert PLACES[5] not in final and "Ravensby" in final


async def test_update_delete_and_queries_at_once_leave_nothing_behind(app_client):
    app = app_client
    await make_project(app)
    await ingest(app, document(10))
    body = {"project_id": "p", "text": document(10, {5: paragraph(5, "Ravensby")})}
    put = await app.http.put("/documents/guide", json=body)
    assert put.status_code == 202, put.text
    question = f"Where does {NAMES[5]} keep the old lighthouse records?"
    deleted, *contexts = await asyncio.gather(
        app.http.delete("/documents/guide", params={"project_id": "p"}),
        *(ask(app, mode, question) for mode in ("naive", "mix", "local")),
    )
    assert deleted.status_code == 200, deleted.text
    assert all(isinstance(c, str) for c in contexts)
    await settled(app)
    assert [await count(app, t) for t in (documents, chunks, entities, relations)] == [0, 0, 0, 0]
    gone = await app.http.get("/documents/guide/versions", params={"project_id": "p"})
    assert gone.status_code == 404
