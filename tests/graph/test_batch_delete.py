"""POST /documents/delete: several documents deleted with one plan and one rebuild (fake LLM, real pipeline)."""

from __future__ import annotations

from sqlalchemy import func, select, update

from app.db.tables import documents, entities
from app.services.deletion.service import DeletionService
from tests.graph.test_deletion import OVERLAPPING, graph_state, ingest, query

SHARED = [
    "Alice paints in Paris. Alice met Bob.",
    "Alice sings in Paris. Bob met Alice again.",
    "Alice rows in Paris. Alice and Bob argued.",
    "Alice runs in Paris. Bob thanked Alice.",
    "Alice reads in Paris. Alice called Bob.",
]


async def test_batch_rebuild_equals_ingesting_only_the_remaining_documents(app_client):
    app = app_client
    ids = [await ingest(app, text) for text in OVERLAPPING]
    response = await app.http.post(
        "/documents/delete", json={"project_id": "default", "document_ids": [ids[1], ids[3], ids[1]]}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["document_ids"] == sorted([ids[1], ids[3]]) and body["chunks_deleted"] == 2
    assert body["llm_calls"]["extract"] == 0
    await app.http.post("/projects", json={"id": "fresh"})
    for i in (0, 2):
        await ingest(app, OVERLAPPING[i], project_id="fresh")
    rebuilt, fresh = await graph_state(app), await graph_state(app, "fresh")
    for part in ("entities", "relations", "entity_sources", "relation_sources"):
        assert rebuilt[part] == fresh[part], part
    remaining = (await app.http.get("/documents")).json()["documents"]
    assert sorted(d["id"] for d in remaining) == sorted([ids[0], ids[2]])


async def test_each_touched_item_is_summarised_once(start_app, make_settings, fake_llm):
    app = await start_app(make_settings(force_llm_summary_on_merge=2))
    ids = [await ingest(app, text) for text in SHARED]
    fake_llm.calls.clear()
    report = await DeletionService(app.container).delete_documents("default", ids[:3])
    summaries = fake_llm.calls_of("summary")
    prompts = [call.messages[-1]["content"] for call in summaries]
    assert summaries and len(prompts) == len(set(prompts))  # no item summarised twice
    assert report.llm_calls.summary == len(summaries)
    assert len(summaries) <= report.entities_rebuilt + report.relations_rebuilt
    assert report.entities_rebuilt >= 3  # Alice, Bob, Paris: shared by all the deleted documents
    assert not fake_llm.calls_of("extract")


async def test_batch_is_all_or_nothing(app_client):
    app = app_client
    ids = [await ingest(app, text) for text in OVERLAPPING[:2]]
    count = select(func.count().label("n")).select_from(entities)
    before = (await query(app, count))[0]["n"]
    missing = await app.http.post("/documents/delete", json={"document_ids": [ids[0], "doc-nope", "doc-gone"]})
    assert missing.status_code == 404 and missing.json()["code"] == "document_not_found"
    assert "doc-nope" in missing.json()["detail"] and "doc-gone" in missing.json()["detail"]
    async with app.container.db.transaction() as conn:
        await conn.execute(update(documents).where(documents.c.id == ids[1]).values(status="processing"))
    busy = await app.http.post("/documents/delete", json={"document_ids": ids})
    assert busy.status_code == 409 and busy.json()["code"] == "document_processing"
    assert (await query(app, count))[0]["n"] == before
    assert len((await app.http.get("/documents")).json()["documents"]) == 2


async def test_batch_request_validation(start_app, make_settings, fake_llm):
    app = await start_app(make_settings(max_documents_per_request=2, worker_enabled=False))
    too_many = await app.http.post("/documents/delete", json={"document_ids": ["a", "b", "c"]})
    assert too_many.status_code == 422 and too_many.json()["code"] == "too_many_documents"
    empty = await app.http.post("/documents/delete", json={"document_ids": []})
    assert empty.status_code == 422
    bad_id = await app.http.post("/documents/delete", json={"document_ids": ["a/b"]})
    assert bad_id.status_code == 422
    unknown_project = await app.http.post("/documents/delete", json={"project_id": "ghost", "document_ids": ["a"]})
    assert unknown_project.status_code == 404 and unknown_project.json()["code"] == "project_not_found"
