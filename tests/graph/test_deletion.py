"""DELETE /documents/{id}: graph rebuilt from cached extractions through the real pipeline (fake LLM)."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import func, select, update

from app.db.tables import chunks, documents, entities, entity_sources, llm_cache, relation_sources, relations
from app.domain.texts import entity_embedding_text, relation_embedding_text, text_hash
from app.repositories import deletion as deletion_repo
from app.repositories import graph as graph_repo
from app.services.deletion.service import DeletionService

DOC_A = "Alice met Bob in Paris. Zed builds Widgets."
DOC_B = "Bob visited Paris with Carol."
DOC_C = "Carol met Alice in Rome."


async def ingest(app, text: str, project_id: str = "default") -> str:
    body = {"project_id": project_id, "documents": [{"text": text, "file_path": f"{text[:5]}.txt"}], "wait": True}
    response = await app.http.post("/documents", json=body)
    assert response.status_code == 200, response.text
    [item] = response.json()["documents"]
    return item["id"]


async def query(app, stmt) -> list[dict]:
    async with app.container.db.connect() as conn:
        return [dict(r) for r in (await conn.execute(stmt)).mappings()]


async def graph_state(app, project_id: str = "default") -> dict:
    """Everything a rebuild must get right, keyed by identity (embeddings reduced to their text hash)."""
    ents = await query(
        app,
        select(
            entities.c.key,
            entities.c.name,
            entities.c.entity_type,
            entities.c.description,
            entities.c.source_ids,
            entities.c.file_paths,
            entities.c.degree,
            entities.c.embedded_hash,
        )
        .where(entities.c.project_id == project_id)
        .order_by(entities.c.key),
    )
    rels = await query(
        app,
        select(
            relations.c.src_key,
            relations.c.tgt_key,
            relations.c.keywords,
            relations.c.description,
            relations.c.weight,
            relations.c.source_ids,
            relations.c.file_paths,
            relations.c.embedded_hash,
        )
        .where(relations.c.project_id == project_id)
        .order_by(relations.c.src_key, relations.c.tgt_key),
    )
    es = await query(
        app,
        select(entity_sources.c.entity_key, entity_sources.c.chunk_id)
        .where(entity_sources.c.project_id == project_id)
        .order_by(entity_sources.c.entity_key, entity_sources.c.seq),
    )
    rs = await query(
        app,
        select(relation_sources.c.src_key, relation_sources.c.tgt_key, relation_sources.c.chunk_id)
        .where(relation_sources.c.project_id == project_id)
        .order_by(relation_sources.c.src_key, relation_sources.c.tgt_key, relation_sources.c.seq),
    )
    cache = await query(
        app, select(llm_cache.c.key).where(llm_cache.c.project_id == project_id).order_by(llm_cache.c.key)
    )
    return {"entities": ents, "relations": rels, "entity_sources": es, "relation_sources": rs, "cache": cache}


@pytest.fixture
async def three_docs(app_client):
    ids = [await ingest(app_client, text) for text in (DOC_A, DOC_B, DOC_C)]
    return app_client, ids


async def test_delete_one_document_rebuilds_shared_items_without_extraction(three_docs, fake_llm):
    app, (doc_a, doc_b, doc_c) = three_docs
    a_cache_keys = (await query(app, select(chunks.c.extraction_cache_keys).where(chunks.c.document_id == doc_a)))[0][
        "extraction_cache_keys"
    ]
    assert a_cache_keys
    fake_llm.calls.clear()

    response = await app.http.delete(f"/documents/{doc_a}")
    assert response.status_code == 200, response.text
    assert response.json() == {
        "document_id": doc_a,
        "chunks_deleted": 1,
        "entities_deleted": 2,
        "entities_rebuilt": 3,  # Zed, Widgets gone; Alice, Bob, Paris rebuilt
        "relations_deleted": 2,
        "relations_rebuilt": 1,  # Alice–Bob, Zed–Widgets gone; Bob–Paris rebuilt
        "llm_calls": {"extract": 0, "summary": 0},
    }
    assert not fake_llm.calls_of("extract") and not fake_llm.calls_of("glean")

    state = await graph_state(app)
    by_key = {e["key"]: e for e in state["entities"]}
    assert set(by_key) == {"alice", "bob", "carol", "paris", "rome"}
    assert by_key["alice"]["description"] == "Carol met Alice in Rome."
    assert by_key["bob"]["description"] == "Bob visited Paris with Carol."
    for row in state["entities"]:
        assert "Alice met Bob" not in row["description"] and "Zed" not in row["description"]
        assert row["embedded_hash"] == text_hash(entity_embedding_text(row["name"], row["description"]))
    bob_paris = next(r for r in state["relations"] if (r["src_key"], r["tgt_key"]) == ("bob", "paris"))
    assert bob_paris["description"] == "Bob visited Paris with Carol." and bob_paris["weight"] == 1.0
    assert bob_paris["embedded_hash"] == text_hash(
        relation_embedding_text("Bob", "Paris", bob_paris["keywords"], bob_paris["description"])
    )
    assert ("alice", "bob") not in {(r["src_key"], r["tgt_key"]) for r in state["relations"]}

    remaining_chunks = {r["id"] for r in await query(app, select(chunks.c.id))}
    assert all(r["chunk_id"] in remaining_chunks for r in state["entity_sources"] + state["relation_sources"])
    assert all(c.startswith((doc_b, doc_c)) for e in state["entities"] for c in e["source_ids"])
    assert {k["key"] for k in state["cache"]}.isdisjoint(a_cache_keys)
    assert (await app.http.get(f"/documents/{doc_a}")).status_code == 404
    assert (await app.http.get("/entities/Zed")).status_code == 404


OVERLAPPING = [
    "Alice met Bob in Paris.",
    "Alice met Bob in Rome. Carol knows Alice.",
    "Alice met Bob in Paris again.",
    "Bob met Alice at noon. Paris welcomed Bob.",
]


@pytest.mark.parametrize(("texts", "deleted"), [([DOC_A, DOC_B, DOC_C], 0), (OVERLAPPING, 1), (OVERLAPPING, 3)])
async def test_rebuilt_graph_equals_ingesting_only_the_remaining_documents(app_client, texts, deleted):
    """Descriptions, types, keywords, weights, source ids, file paths, degrees, embeddings and provenance
    after a deletion are exactly what ingesting the other documents (in the same order) produces."""
    app = app_client
    ids = [await ingest(app, text) for text in texts]
    assert (await app.http.delete(f"/documents/{ids[deleted]}")).status_code == 200
    await app.http.post("/projects", json={"id": "fresh"})
    for i, text in enumerate(texts):
        if i != deleted:
            await ingest(app, text, project_id="fresh")
    rebuilt, fresh = await graph_state(app), await graph_state(app, "fresh")
    for part in ("entities", "relations", "entity_sources", "relation_sources"):
        assert rebuilt[part] == fresh[part], part
    assert rebuilt["relations"], "the scenario must leave relations to compare"


async def test_cache_entries_shared_with_another_document_are_kept(start_app, make_settings, fake_llm):
    app = await start_app(make_settings())
    created = await app.http.post(
        "/projects",
        json={"id": "p", "settings": {"chunk_split_by_character": "\n\n", "chunk_split_by_character_only": True}},
    )
    assert created.status_code == 201
    first = await ingest(app, "Alice met Bob.\n\nCarol sings.", project_id="p")
    second = await ingest(app, "Alice met Bob.\n\nDave dances.", project_id="p")
    shared_key = (await query(app, select(chunks.c.extraction_cache_keys).where(chunks.c.id == f"{second}-chunk-000")))[
        0
    ]["extraction_cache_keys"][0]
    first_only = (await query(app, select(chunks.c.extraction_cache_keys).where(chunks.c.id == f"{first}-chunk-001")))[
        0
    ]["extraction_cache_keys"][0]
    fake_llm.calls.clear()
    report = (await app.http.delete(f"/documents/{first}", params={"project_id": "p"})).json()
    assert report["entities_deleted"] == 1 and report["llm_calls"]["extract"] == 0  # Carol
    cache = {r["key"] for r in (await graph_state(app, "p"))["cache"]}
    assert shared_key in cache and first_only not in cache
    alice = (await app.http.get("/entities/Alice", params={"project_id": "p"})).json()
    assert [s["document_id"] for s in alice["source_chunks"]] == [second]
    assert alice["description"] == "Alice met Bob."
    assert not fake_llm.calls


async def test_delete_all_documents_leaves_an_empty_graph_but_hand_made_entities(three_docs):
    app, ids = three_docs
    created = await app.http.post("/entities", json={"name": "Manual", "description": "Curated by hand."})
    assert created.status_code == 201
    assert (
        await app.http.post("/relations", json={"source": "Manual", "target": "Bob", "description": "Hand-made link."})
    ).status_code == 201
    for doc_id in ids:
        response = await app.http.delete(f"/documents/{doc_id}")
        assert response.status_code == 200, response.text
        assert response.json()["llm_calls"]["extract"] == 0
    state = await graph_state(app)
    assert [e["key"] for e in state["entities"]] == ["manual"]
    assert state["entities"][0]["degree"] == 0  # its relation went with Bob
    assert state["relations"] == [] and state["entity_sources"] == [] and state["relation_sources"] == []
    extract_cache = await query(app, select(llm_cache.c.key).where(llm_cache.c.cache_type != "summary"))
    assert extract_cache == []
    assert await query(app, select(chunks.c.id)) == [] and await query(app, select(documents.c.id)) == []


async def test_summary_calls_are_counted_and_cached_summaries_reused(start_app, make_settings, fake_llm):
    app = await start_app(make_settings(force_llm_summary_on_merge=2))
    texts = ["Alice is a painter.", "Alice lives near the sea.", "Alice sings at night."]
    ids = [await ingest(app, t) for t in texts]
    fake_llm.calls.clear()
    # Without the last document Alice has the two fragments ingestion already summarised: a cache hit.
    first = (await app.http.delete(f"/documents/{ids[2]}")).json()
    assert first["llm_calls"] == {"extract": 0, "summary": 0} and first["entities_rebuilt"] == 1
    assert not fake_llm.calls
    alice = (await app.http.get("/entities/Alice")).json()
    assert alice["description"].startswith("Summary:")
    # Put the third back (ingestion hits its own summary cache), then drop the first: the remaining pair
    # (second, third) was never summarised, so exactly one real summary call.
    assert await ingest(app, texts[2]) == ids[2]
    fake_llm.calls.clear()
    second = await app.http.delete(f"/documents/{ids[0]}")
    assert second.json()["llm_calls"] == {"extract": 0, "summary": 1}
    assert len(fake_llm.calls_of("summary")) == 1 and not fake_llm.calls_of("extract")
    assert second.headers["X-Token-Input"] != "0"  # the summary's tokens reach the request's usage headers
    assert (await app.http.get("/entities/Alice")).json()["description"] == fake_llm.calls_of("summary")[0].response


async def test_fault_midway_leaves_previous_state_intact(three_docs, monkeypatch):
    app, (doc_a, _, _) = three_docs
    before = await graph_state(app)

    async def boom(*args, **kwargs):
        raise RuntimeError("injected fault after the document rows were deleted")

    monkeypatch.setattr(deletion_repo, "update_rebuilt_relations", boom)  # the last graph write
    with pytest.raises(RuntimeError, match="injected fault"):
        await DeletionService(app.container).delete_document("default", doc_a)
    monkeypatch.undo()
    assert await graph_state(app) == before
    assert (await app.http.get(f"/documents/{doc_a}")).status_code == 200
    assert (await app.http.delete(f"/documents/{doc_a}")).status_code == 200  # and it can be retried


async def test_unknown_and_processing_documents(three_docs):
    app, (doc_a, _, _) = three_docs
    missing = await app.http.delete("/documents/doc-nope")
    assert missing.status_code == 404 and missing.json()["code"] == "document_not_found"
    assert (await app.http.delete(f"/documents/{doc_a}", params={"project_id": "nope"})).status_code == 404
    async with app.container.db.transaction() as conn:
        await conn.execute(update(documents).where(documents.c.id == doc_a).values(status="processing"))
    busy = await app.http.delete(f"/documents/{doc_a}")
    assert busy.status_code == 409 and busy.json()["code"] == "document_processing"
    count = await query(app, select(func.count().label("n")).select_from(entities))
    assert count[0]["n"] == 7  # nothing was deleted


async def test_deletion_waits_for_the_pipeline_lock_on_shared_keys(three_docs):
    """A merge holding the advisory lock of a shared entity (here: Bob) holds the deletion back until it commits."""
    app, (doc_a, _, _) = three_docs
    async with app.container.db.transaction() as conn:
        await graph_repo.lock_keys(conn, "default", ["bob"])
        task = asyncio.create_task(app.http.delete(f"/documents/{doc_a}"))
        done, _ = await asyncio.wait({task}, timeout=0.5)
        assert not done  # blocked on the lock, nothing written yet
    response = await task
    assert response.status_code == 200 and response.json()["entities_deleted"] == 2


async def test_ingestion_while_deletion_plans_is_not_lost(three_docs, monkeypatch):
    """A document merged between the lock-free planning phase and the write phase changes a shared entity:
    the deletion notices under the locks, plans again, and keeps the newcomer's contribution."""
    app, (doc_a, _, _) = three_docs
    newcomer = "Bob sailed to Lisbon."
    original = DeletionService._prepare
    calls = []

    async def prepare_then_ingest(self, *args):
        prepared = await original(self, *args)
        calls.append(1)
        if len(calls) == 1:
            await ingest(app, newcomer)
        return prepared

    monkeypatch.setattr(DeletionService, "_prepare", prepare_then_ingest)
    assert (await app.http.delete(f"/documents/{doc_a}")).status_code == 200
    assert len(calls) == 2
    bob = (await app.http.get("/entities/Bob")).json()
    assert "Bob sailed to Lisbon." in bob["description"] and "Alice met Bob" not in bob["description"]
    await app.http.post("/projects", json={"id": "fresh"})
    for text in (DOC_B, DOC_C, newcomer):
        await ingest(app, text, project_id="fresh")
    rebuilt, fresh = await graph_state(app), await graph_state(app, "fresh")
    for part in ("entities", "relations", "entity_sources", "relation_sources"):
        assert rebuilt[part] == fresh[part], part


async def test_hand_edited_items_keep_their_text_when_rebuilt(three_docs):
    """Official LightRAG: a rebuild recomputes descriptions and discards manual edits. Here curated text
    stays while provenance, source ids and file paths still drop the deleted document."""
    app, (doc_a, doc_b, _) = three_docs
    edited = await app.http.patch("/entities/Bob", json={"description": "Bob, as the curator describes him."})
    assert edited.status_code == 200 and edited.json()["curated"] is True
    assert (
        await app.http.patch("/relations", json={"source": "Paris", "target": "Bob", "description": "Curated link."})
    ).status_code == 200
    report = (await app.http.delete(f"/documents/{doc_a}")).json()
    assert report["entities_rebuilt"] == 3 and report["relations_rebuilt"] == 1
    bob = (await app.http.get("/entities/Bob")).json()
    assert bob["description"] == "Bob, as the curator describes him." and bob["curated"] is True
    assert [s["document_id"] for s in bob["source_chunks"]] == [doc_b]
    assert bob["source_ids"] == [f"{doc_b}-chunk-000"] and bob["file_paths"] == ["Bob v.txt"]
    [link] = [r for r in bob["relations"] if r["target"] == "Paris"]
    assert link["description"] == "Curated link." and link["file_paths"] == ["Bob v.txt"]
    alice = (await app.http.get("/entities/Alice")).json()  # not curated: rebuilt from the cache
    assert alice["description"] == "Carol met Alice in Rome." and alice["curated"] is False


async def test_merged_entity_survives_deletion_of_one_of_its_documents_without_its_text(three_docs):
    """A merge by hand combines extracted texts: deleting a document rebuilds the merged entity from the
    remaining chunks (their records naming Bob read through the alias the merge recorded), so nothing the
    deleted document said stays in it; the merge itself (one entity, Bob its alias) stands."""
    app, (doc_a, doc_b, doc_c) = three_docs
    merged = await app.http.post("/entities/merge", json={"source_entities": ["Bob"], "target_entity": "Carol"})
    assert merged.status_code == 200
    assert "Alice met Bob in Paris." in (await app.http.get("/entities/Carol")).json()["description"]
    assert (await app.http.delete(f"/documents/{doc_a}")).status_code == 200
    carol = (await app.http.get("/entities/Carol")).json()
    assert "Alice met Bob in Paris." not in carol["description"] and "Zed" not in carol["description"]
    assert "Bob visited Paris with Carol." in carol["description"]  # DOC_B's records, Bob's read as Carol's
    assert "Carol met Alice in Rome." in carol["description"]
    assert {s["document_id"] for s in carol["source_chunks"]} == {doc_b, doc_c} and carol["curated"] is False
    assert (await app.http.get("/entities/Bob")).json()["name"] == "Carol"  # the merged name is Carol's alias
    relations = (await app.http.get("/relations", params={"entity": "Carol"})).json()["relations"]
    assert all("Alice met Bob in Paris." not in r["description"] for r in relations)


async def test_a_merge_with_a_description_written_by_hand_keeps_it_through_deletions(three_docs):
    app, (doc_a, _, _) = three_docs
    written = {"description": "Carol, as the curator describes her after the merge."}
    merged = await app.http.post(
        "/entities/merge",
        json={"source_entities": ["Bob"], "target_entity": "Carol", "target_entity_data": written},
    )
    assert merged.status_code == 200
    assert (await app.http.delete(f"/documents/{doc_a}")).status_code == 200
    carol = (await app.http.get("/entities/Carol")).json()
    assert carol["description"] == written["description"] and carol["curated"] is True


async def test_only_the_fields_written_by_hand_survive_a_rebuild(three_docs):
    """A type corrected by hand, a rename, a relation's weight set by hand: each field stays as the person set
    it, and the rest is rebuilt from the remaining chunks, so the deleted document's text goes (before migration
    0024 any edit kept the whole text of the row)."""
    app, (doc_a, doc_b, _) = three_docs
    bob = (await app.http.get("/entities/Bob")).json()
    assert "Alice met Bob in Paris." in bob["description"]
    typed = await app.http.patch("/entities/Bob", json={"entity_type": "explorer"})
    assert typed.status_code == 200 and typed.json()["curated"] is True
    renamed = await app.http.patch("/entities/Alice", json={"new_name": "Alice Walker"})
    assert renamed.status_code == 200 and "Alice met Bob in Paris." in renamed.json()["description"]
    weighted = await app.http.patch("/relations", json={"source": "Paris", "target": "Bob", "weight": 7.0})
    assert weighted.status_code == 200 and weighted.json()["curated"] is True
    assert (await app.http.delete(f"/documents/{doc_a}")).status_code == 200
    bob = (await app.http.get("/entities/Bob")).json()
    assert bob["description"] == "Bob visited Paris with Carol." and bob["entity_type"] == "explorer"
    assert bob["curated"] is True and [s["document_id"] for s in bob["source_chunks"]] == [doc_b]
    [link] = [r for r in bob["relations"] if r["target"] == "Paris"]
    assert link["weight"] == 7.0 and "Alice met Bob" not in link["description"] and link["curated"] is True
    alice = (await app.http.get("/entities/Alice Walker")).json()  # its records name Alice: read by the alias
    assert (alice["name"], alice["curated"]) == ("Alice Walker", False)
    assert alice["description"] == "Carol met Alice in Rome."


async def test_text_a_later_document_appended_to_a_hand_written_description_goes_with_that_document(three_docs):
    """Ingestion appends what later documents say to a description written by hand; deleting such a document
    takes its sentences out again and keeps the person's text (and what remaining chunks say too)."""
    app, _ = three_docs
    written = "Bob, as the curator describes him."
    assert (await app.http.patch("/entities/Bob", json={"description": written})).status_code == 200
    link = {"source": "Paris", "target": "Bob", "description": "Curated link."}
    assert (await app.http.patch("/relations", json=link)).status_code == 200
    later = await ingest(app, "Bob sailed to Lisbon. Bob toured Paris again.")
    grown = (await app.http.get("/entities/Bob")).json()
    assert written in grown["description"] and "Bob sailed to Lisbon." in grown["description"]
    [grown_link] = [r for r in grown["relations"] if r["target"] == "Paris"]
    assert "Bob toured Paris again." in grown_link["description"]
    assert (await app.http.delete(f"/documents/{later}")).status_code == 200
    bob = (await app.http.get("/entities/Bob")).json()
    assert bob["description"] == written and bob["curated"] is True
    [kept_link] = [r for r in bob["relations"] if r["target"] == "Paris"]
    assert kept_link["description"] == "Curated link."
