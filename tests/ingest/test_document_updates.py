"""PUT /documents/{id}: a document's new text applied by chunk diff, through the real pipeline (fake LLM)."""

from __future__ import annotations

import asyncio
import json

import pytest
from sqlalchemy import select

from app.db.tables import chunks, documents, entities, entity_sources, relations
from tests.support.fakes.openai_server import names_in, sentences

NAMES = [
    "Aldous Brakken", "Bertil Corvo", "Cassia Dunmore", "Dorian Elk", "Edda Fairweather", "Falk Grissom",
    "Greta Holloway", "Hugo Ingram", "Ilse Jarrow", "Jonas Kettering", "Katya Lindqvist", "Lorcan Mabry",
    "Mirela Nakamura", "Nils Oberg", "Odile Pernet", "Piet Quarles", "Rhea Salonen", "Stellan Tovey",
    "Tamsin Ulvaeus", "Ugo Varela", "Vera Whitcombe", "Wendel Yorke",
]  # fmt: skip
PLACES = [
    "Ashgrove", "Bellmoor", "Caldera", "Dunwich", "Eastmere", "Fenwick", "Glenhollow", "Harrowgate",
    "Ironvale", "Juniper", "Kestrel", "Larkspur", "Marrowby", "Northwold", "Oakhurst", "Pendle",
    "Quillon", "Ravensby", "Saltmarsh", "Thornbury", "Umberfield", "Vexley",
]  # fmt: skip
SETTINGS = {"chunk_size": 48, "chunk_overlap_size": 8}


@pytest.fixture
async def idle_client(make_settings, start_app):
    """The API without a worker: documents and updates stay queued."""
    return await start_app(make_settings(worker_enabled=False))


def paragraph(i: int, place: str | None = None) -> str:
    return (
        f"{NAMES[i]} keeps the old lighthouse records in {place or PLACES[i]} and writes letters every winter "
        f"about tides, storms and the harbour."
    )


def document(n: int = 10, edits: dict[int, str] | None = None) -> str:
    paragraphs = [(edits or {}).get(i, paragraph(i)) for i in range(n)]
    return "\n\n".join(p for p in paragraphs if p)


async def make_project(app, project_id: str = "p") -> None:
    response = await app.http.post("/projects", json={"id": project_id, "settings": SETTINGS})
    assert response.status_code in (200, 201), response.text


async def ingest(app, text: str, doc_id: str = "guide", project_id: str = "p") -> None:
    body = {
        "project_id": project_id,
        "documents": [{"text": text, "id": doc_id, "file_path": "guide.md"}],
        "wait": True,
    }
    response = await app.http.post("/documents", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["documents"][0]["status"] == "processed"


async def update(app, text: str, doc_id: str = "guide", project_id: str = "p", **extra) -> dict:
    body = {"project_id": project_id, "text": text, "wait": True, **extra}
    response = await app.http.put(f"/documents/{doc_id}", json=body)
    assert response.status_code == 200, response.text
    return response.json()


async def rows(app, stmt) -> list[dict]:
    async with app.container.db.connect() as conn:
        return [dict(r) for r in (await conn.execute(stmt)).mappings()]


async def entity_keys(app, project_id: str = "p") -> set[str]:
    return {r["key"] for r in await rows(app, select(entities.c.key).where(entities.c.project_id == project_id))}


async def test_update_with_the_same_text_does_nothing(app_client, fake_llm):
    app = app_client
    await make_project(app)
    await ingest(app, document(4))
    fake_llm.calls.clear()
    result = await update(app, document(4))
    assert result == {"id": "guide", "status": "unchanged", "update_id": None, "version": 1, "error": None}
    assert not fake_llm.calls
    versions = (await app.http.get("/documents/guide/versions", params={"project_id": "p"})).json()
    assert [v["version"] for v in versions["versions"]] == [1]


async def test_edited_paragraph_extracts_only_new_chunks_and_removes_the_old_fact(app_client, fake_llm):
    app = app_client
    await make_project(app)
    await ingest(app, document(10))
    before = await rows(app, select(chunks.c.id).where(chunks.c.document_id == "guide"))
    assert len(before) >= 6
    assert "ravensby" not in await entity_keys(app)
    fake_llm.calls.clear()

    result = await update(app, document(10, {5: paragraph(5, "Ravensby")}))
    assert result["status"] == "processed" and result["version"] == 2, result
    extract_calls = len(fake_llm.calls_of("extract"))
    versions = (await app.http.get("/documents/guide/versions", params={"project_id": "p"})).json()
    assert versions["version"] == 2
    v2 = versions["versions"][-1]
    assert v2["state"] == "current" and v2["chunks_added"] == extract_calls
    assert 1 <= extract_calls <= 3, extract_calls
    assert v2["chunks_reused"] + v2["chunks_added"] == v2["chunks_count"]

    keys = await entity_keys(app)
    assert "ravensby" in keys and PLACES[5].lower() not in keys
    assert "falk grissom" in keys  # the edited paragraph's person is still there, from the new chunk
    doc = (await rows(app, select(documents).where(documents.c.id == "guide")))[0]
    assert doc["version"] == 2 and "Ravensby" in doc["content"] and doc["status"] == "processed"
    after = await rows(app, select(chunks.c.document_id, chunks.c.content).where(chunks.c.project_id == "p"))
    assert {r["document_id"] for r in after} == {"guide"}
    assert not any(PLACES[5] in r["content"] for r in after)
    sources = await rows(app, select(entity_sources.c.document_id).where(entity_sources.c.project_id == "p"))
    assert {r["document_id"] for r in sources} == {"guide"}
    listed = (await app.http.get("/documents", params={"project_id": "p"})).json()
    assert [d["id"] for d in listed["documents"]] == ["guide"]
    assert listed["documents"][0]["version"] == 2
    rels = await rows(app, select(relations.c.description).where(relations.c.project_id == "p"))
    assert not any(PLACES[5] in r["description"] for r in rels)


def graph_the_chunks_state(chunk_texts: list[str]) -> tuple[set[str], set[tuple[str, str]]]:
    """The entity keys and relation pairs the fake extractor reads from exactly these chunks."""
    keys: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    for content in chunk_texts:
        for sentence in sentences(content):
            names = [n.lower() for n in names_in(sentence)]
            keys.update(names)
            pairs.update(tuple(sorted(p)) for p in zip(names, names[1:], strict=False) if p[0] != p[1])
    return keys, pairs


async def graph_of(app, project_id: str = "p") -> tuple[set[str], set[tuple[str, str]]]:
    rels = await rows(app, select(relations.c.src_key, relations.c.tgt_key).where(relations.c.project_id == project_id))
    return await entity_keys(app, project_id), {(r["src_key"], r["tgt_key"]) for r in rels}


MOVED = document(10, {2: paragraph(7), 7: paragraph(2)})
EDITS = {
    "start": document(10, {0: paragraph(0, "Saltmarsh")}),
    "middle": document(10, {5: paragraph(5, "Ravensby")}),
    "append": document(10) + "\n\n" + paragraph(12),
    "inserted": document(10, {4: paragraph(4) + "\n\n" + paragraph(13)}),
    "deleted": document(10, {6: ""}),
    "moved": MOVED,
}


@pytest.fixture
async def unresolved_client(make_settings, start_app):
    """Names kept as extracted (no entity resolution), so the graph is exactly what the chunks' records say:
    a chunk boundary may leave a name's root alone ("Falk" of "Falk Grissom"), which resolution would join."""
    return await start_app(make_settings(entity_resolution="off"))


@pytest.mark.parametrize("edit", list(EDITS))
async def test_edits_leave_the_graph_of_the_new_chunks_only(unresolved_client, fake_llm, edit):
    app = unresolved_client
    await make_project(app)
    await ingest(app, document(10))
    old_chunks = len(await rows(app, select(chunks.c.id).where(chunks.c.document_id == "guide")))
    fake_llm.calls.clear()

    result = await update(app, EDITS[edit])
    assert result["status"] == "processed", result
    contents = [
        r["content"]
        for r in await rows(
            app, select(chunks.c.content).where(chunks.c.document_id == "guide").order_by(chunks.c.order_index)
        )
    ]
    assert await graph_of(app) == graph_the_chunks_state(contents)  # nothing stale, nothing missing
    v2 = (await app.http.get("/documents/guide/versions", params={"project_id": "p"})).json()["versions"][-1]
    assert len(fake_llm.calls_of("extract")) == v2["chunks_added"]
    if edit != "moved":  # one edit region: about the chunks it touches, not the document
        assert v2["chunks_added"] <= 3 and v2["chunks_reused"] >= old_chunks - 3, v2
    doc = (await rows(app, select(documents.c.content).where(documents.c.id == "guide")))[0]
    assert doc["content"] == EDITS[edit]


async def ask(app, mode: str, question: str) -> str:
    body = {"project_id": "p", "query": question, "mode": mode, "only_need_context": True}
    response = await app.http.post("/query", json=body)
    assert response.status_code == 200, response.text
    return json.dumps(response.json()["context"])


async def test_the_old_fact_leaves_every_query_mode_and_the_new_one_answers(app_client):
    app = app_client
    await make_project(app)
    await ingest(app, document(10))
    question = f"Where does {NAMES[5]} keep the old lighthouse records?"
    assert PLACES[5] in await ask(app, "mix", question)
    await update(app, document(10, {5: paragraph(5, "Ravensby")}))
    for mode in ("local", "global", "hybrid", "naive", "mix"):
        context = await ask(app, mode, question)
        assert PLACES[5] not in context, mode
    for mode in ("local", "naive", "mix"):
        assert "Ravensby" in await ask(app, mode, question), mode


async def test_shared_entities_keep_their_other_sources(app_client):
    app = app_client
    await make_project(app)
    await ingest(app, document(6, {3: "Harbour Council meets Dorian Elk in Dunwich every spring."}))
    await ingest(app, "Harbour Council funds Odile Pernet in Oakhurst.", doc_id="other")
    await update(app, document(6))  # the paragraph naming the council is gone from the guide
    council = await rows(
        app,
        select(entities.c.description, entities.c.source_ids).where(
            entities.c.project_id == "p", entities.c.key == "harbour council"
        ),
    )
    assert council and council[0]["description"] == "Harbour Council funds Odile Pernet in Oakhurst."
    assert all(s.startswith("other-") for s in council[0]["source_ids"])
    keys = await entity_keys(app)
    assert "odile pernet" in keys and "dorian elk" in keys  # Dorian Elk is still in the guide's paragraph 3


async def test_a_failed_update_leaves_the_previous_version_serving_and_can_be_retried(app_client, fake_llm):
    app = app_client
    await make_project(app)
    await ingest(app, document(8))
    before = await graph_of(app)
    fake_llm.fail_next(count=50, status=400, operation="extract")
    body = {"project_id": "p", "text": document(8, {4: paragraph(4, "Vexley")}), "wait": True}
    failed = (await app.http.put("/documents/guide", json=body)).json()
    assert failed["status"] == "failed" and failed["update_id"] == "guide@v2", failed
    fake_llm.reset()
    assert await graph_of(app) == before
    doc = (await app.http.get("/documents/guide", params={"project_id": "p"})).json()
    assert doc["version"] == 1 and doc["status"] == "processed" and "Vexley" not in doc["content_summary"]
    versions = (await app.http.get("/documents/guide/versions", params={"project_id": "p"})).json()
    assert [(v["version"], v["state"]) for v in versions["versions"]] == [(1, "current"), (2, "failed")]
    assert PLACES[4] in await ask(app, "naive", f"Where does {NAMES[4]} keep records?")

    retried = await app.http.post("/documents/guide@v2/retry", json={"project_id": "p"})
    assert retried.status_code == 200, retried.text
    for _ in range(200):
        doc = (await app.http.get("/documents/guide", params={"project_id": "p"})).json()
        if doc["version"] == 2:
            break
        await asyncio.sleep(0.05)
    assert doc["version"] == 2 and "vexley" in await entity_keys(app)


async def test_updates_of_unfinished_documents_are_refused_and_queued_updates_cancel(idle_client):
    app = idle_client
    await make_project(app)
    posted = await app.http.post(
        "/documents", json={"project_id": "p", "documents": [{"text": document(3), "id": "guide"}]}
    )
    assert posted.json()["documents"][0]["status"] == "pending"
    refused = await app.http.put("/documents/guide", json={"project_id": "p", "text": document(4)})
    assert refused.status_code == 409 and refused.json()["code"] == "document_processing"
    missing = await app.http.put("/documents/nope", json={"project_id": "p", "text": "Some text."})
    assert missing.status_code == 404
    empty = await app.http.put("/documents/guide", json={"project_id": "p", "text": "  \n "})
    assert empty.status_code == 422 and empty.json()["code"] == "invalid_documents"

    # as if processed: then an update queues, the same text again answers with it, other text is refused
    async with app.container.db.transaction() as conn:
        await conn.execute(documents.update().where(documents.c.id == "guide").values(status="processed"))
    queued = (await app.http.put("/documents/guide", json={"project_id": "p", "text": document(4)})).json()
    assert queued == {"id": "guide", "status": "pending", "update_id": "guide@v2", "version": 2, "error": None}
    again = (await app.http.put("/documents/guide", json={"project_id": "p", "text": document(4)})).json()
    assert again["update_id"] == "guide@v2"
    other = await app.http.put("/documents/guide", json={"project_id": "p", "text": document(5)})
    assert other.status_code == 409 and other.json()["code"] == "update_in_progress"
    on_update = await app.http.put("/documents/guide@v2", json={"project_id": "p", "text": document(5)})
    assert on_update.status_code == 422 and on_update.json()["code"] == "not_a_document"
    listed = (await app.http.get("/documents", params={"project_id": "p"})).json()
    assert [d["id"] for d in listed["documents"]] == ["guide"]

    cancel = await app.http.post("/documents/guide@v2/cancel", json={"project_id": "p"})
    assert cancel.status_code == 200, cancel.text
    versions = (await app.http.get("/documents/guide/versions", params={"project_id": "p"})).json()
    assert [(v["version"], v["state"]) for v in versions["versions"]] == [(1, "current"), (2, "cancelled")]
    replaced = (await app.http.put("/documents/guide", json={"project_id": "p", "text": document(5)})).json()
    assert replaced["status"] == "pending" and replaced["update_id"] == "guide@v2"
    doc = (await rows(app, select(documents.c.version, documents.c.content).where(documents.c.id == "guide")))[0]
    assert doc == {"version": 1, "content": document(3)}


async def test_posting_an_id_again_with_new_text_and_uploading_a_file_again_update(app_client, fake_llm):
    app = app_client
    await make_project(app)
    await ingest(app, document(6))
    body = {"project_id": "p", "documents": [{"text": document(6, {2: paragraph(2, "Thornbury")}), "id": "guide"}]}
    posted = (await app.http.post("/documents", json={**body, "wait": True})).json()["documents"][0]
    assert posted["id"] == "guide" and posted["status"] == "processed" and posted["update_id"] == "guide@v2"
    assert "thornbury" in await entity_keys(app)

    new_text = document(6, {2: paragraph(2, "Umberfield")})
    files = {"files": ("guide.md", new_text.encode(), "text/markdown")}
    data = {"project_id": "p", "wait": "true", "update": "true"}
    uploaded = (await app.http.post("/documents/upload", files=files, data=data)).json()["documents"][0]
    assert uploaded["id"] == "guide" and uploaded["status"] == "processed" and uploaded["update_id"] == "guide@v3"
    keys = await entity_keys(app)
    assert "umberfield" in keys and "thornbury" not in keys
    versions = (await app.http.get("/documents/guide/versions", params={"project_id": "p"})).json()
    assert [(v["version"], v["state"]) for v in versions["versions"]] == [
        (1, "previous"),
        (2, "previous"),
        (3, "current"),
    ]
    # without update=true the same file name with other text is a new document
    other = {"files": ("guide.md", document(3).encode(), "text/markdown")}
    fresh = (await app.http.post("/documents/upload", files=other, data={"project_id": "p", "wait": "true"})).json()
    assert fresh["documents"][0]["id"] != "guide" and fresh["documents"][0]["update_id"] is None


async def test_an_applied_update_counts_as_its_document_only(app_client):
    app = app_client
    await make_project(app)
    await ingest(app, document(4))
    await update(app, document(4, {1: paragraph(1, "Ravensby")}))
    listing = (await app.http.get("/documents", params={"project_id": "p"})).json()
    assert listing["total"] == 1 and listing["counts"]["processed"] == 1, listing["counts"]
    pipeline = (await app.http.get("/pipeline", params={"project_id": "p"})).json()
    assert pipeline["by_status"]["processed"] == 1 and pipeline["queue_depth"] == 0, pipeline
    [project] = [p for p in (await app.http.get("/projects")).json()["projects"] if p["id"] == "p"]
    assert project["counts"]["documents"] == 1, project["counts"]  # as listed, not its update's row besides
    one = (await app.http.get("/projects/p")).json()
    assert one["counts"]["documents"] == 1, one


async def test_a_waited_update_charges_its_tokens_to_the_request_that_queued_it(app_client):
    """X-Token-Input / X-Token-Output hold what serving the request spent, an update's extraction as a new
    document's; the same text again queues nothing and is charged nothing."""
    app = app_client
    await make_project(app)
    await ingest(app, document(6))
    body = {"project_id": "p", "documents": [{"text": document(6, {2: paragraph(2, "Thornbury")}), "id": "guide"}]}
    posted = await app.http.post("/documents", json={**body, "wait": True})
    assert posted.json()["documents"][0]["status"] == "processed"
    assert int(posted.headers["X-Token-Input"]) > 0 and int(posted.headers["X-Token-Output"]) > 0
    again = await app.http.post("/documents", json={**body, "wait": True})
    assert again.json()["documents"][0]["status"] == "duplicate" and again.headers["X-Token-Input"] == "0"
    put = await app.http.put(
        "/documents/guide", json={"project_id": "p", "text": document(6, {3: paragraph(3, "Umberfield")}), "wait": True}
    )
    assert put.json()["status"] == "processed" and int(put.headers["X-Token-Input"]) > 0


async def test_an_update_by_a_file_name_several_documents_share_is_refused(app_client):
    """Which of them it would update is a guess: the item is rejected naming them, and nothing changes."""
    app = app_client
    await make_project(app)
    ids = []
    for text in (document(2), document(3)):  # without update=true the same name with other text is a new document
        files = {"files": ("notes.md", text.encode(), "text/markdown")}
        done = (await app.http.post("/documents/upload", files=files, data={"project_id": "p", "wait": "true"})).json()
        ids.append(done["documents"][0]["id"])
    files = {"files": ("notes.md", document(4).encode(), "text/markdown")}
    data = {"project_id": "p", "wait": "true", "update": "true"}
    [item] = (await app.http.post("/documents/upload", files=files, data=data)).json()["documents"]
    assert item["status"] == "rejected" and item["update_id"] is None
    assert item["error"].startswith("2 documents are named 'notes.md'") and all(i in item["error"] for i in ids)
    for doc_id, text in zip(ids, (document(2), document(3)), strict=True):
        stored = await app.http.get(f"/documents/{doc_id}", params={"project_id": "p"})
        assert stored.json()["version"] == 1 and stored.json()["content_length"] == len(text)
