"""PUT /documents/{id}: a document's new text applied by chunk diff, through the real pipeline (fake LLM)."""

from __future__ import annotations

from sqlalchemy import select

from app.db.tables import chunks, documents, entities, entity_sources, relations

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
