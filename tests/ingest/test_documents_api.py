"""Documents API: enqueue, ids and duplicates, per-item rejection, listing, detail, chunks, pipeline, retry."""

from __future__ import annotations

import hashlib

import pytest
from sqlalchemy import func, select, update

from app.db.tables import chunks, documents


@pytest.fixture
async def idle_client(make_settings, start_app):
    """The API without a worker: documents stay pending, so enqueue behaviour is observable."""
    app = await start_app(make_settings(worker_enabled=False))
    return app


async def _count(app, table) -> int:
    async with app.container.db.connect() as conn:
        return int(await conn.scalar(select(func.count()).select_from(table)))


async def test_enqueue_returns_202_with_content_hash_ids(idle_client):
    text = "  Alice met Bob in Paris.\x00\x07  "
    response = await idle_client.http.post("/documents", json={"documents": [{"text": text}]})
    assert response.status_code == 202
    expected = "doc-" + hashlib.md5(b"Alice met Bob in Paris.").hexdigest()
    assert response.json() == {
        "documents": [{"id": expected, "status": "pending", "error": None, "file_path": None, "update_id": None}]
    }
    detail = (await idle_client.http.get(f"/documents/{expected}")).json()
    assert detail["status"] == "pending" and detail["content_length"] == len("Alice met Bob in Paris.")
    assert detail["content_summary"] == "Alice met Bob in Paris."


async def test_same_text_again_is_duplicate_and_does_no_work(idle_client):
    body = {"documents": [{"text": "Same words here.", "file_path": "/tmp/dir/a.txt"}]}
    first = (await idle_client.http.post("/documents", json=body)).json()["documents"][0]
    assert first["file_path"] == "a.txt"
    again = await idle_client.http.post("/documents", json=body)
    assert again.status_code == 202
    assert again.json()["documents"][0]["status"] == "duplicate"
    assert again.json()["documents"][0]["id"] == first["id"]
    # a different explicit id with the same content is still a duplicate of the original
    other = await idle_client.http.post("/documents", json={"documents": [{"text": "Same words here.", "id": "x"}]})
    assert other.json()["documents"][0] == {
        "id": first["id"],
        "status": "duplicate",
        "error": None,
        "file_path": None,
        "update_id": None,
    }
    assert await _count(idle_client, documents) == 1


async def test_duplicates_within_one_request(idle_client):
    body = {
        "documents": [
            {"text": "One."},
            {"text": "One."},
            {"text": "Two.", "id": "two"},
            {"text": "Three.", "id": "two"},
        ]
    }
    items = (await idle_client.http.post("/documents", json=body)).json()["documents"]
    assert [i["status"] for i in items] == ["pending", "duplicate", "pending", "duplicate"]
    assert items[1]["id"] == items[0]["id"] and items[3]["id"] == "two"
    assert await _count(idle_client, documents) == 2


async def test_invalid_items_rejected_others_taken(idle_client, make_settings):
    body = {"documents": [{"text": "   \n\t "}, {"text": "Valid text."}, {"text": ""}]}
    response = await idle_client.http.post("/documents", json=body)
    assert response.status_code == 202
    items = response.json()["documents"]
    assert [i["status"] for i in items] == ["rejected", "pending", "rejected"]
    assert "empty" in items[0]["error"]
    assert await _count(idle_client, documents) == 1


async def test_all_invalid_is_422_nothing_stored(idle_client):
    response = await idle_client.http.post("/documents", json={"documents": [{"text": " "}, {"text": "\x00"}]})
    assert response.status_code == 422
    assert response.json()["code"] == "invalid_documents"
    assert "empty" in response.json()["detail"]
    assert await _count(idle_client, documents) == 0
    assert (await idle_client.http.post("/documents", json={"documents": []})).status_code == 422
    assert (await idle_client.http.post("/documents", json={"documents": [{"id": "x"}]})).status_code == 422


async def test_oversize_text_rejected(start_app, make_settings):
    app = await start_app(make_settings(worker_enabled=False, max_document_chars=20))
    mixed = await app.http.post("/documents", json={"documents": [{"text": "x" * 21}, {"text": "short"}]})
    assert [i["status"] for i in mixed.json()["documents"]] == ["rejected", "pending"]
    assert "above the limit" in mixed.json()["documents"][0]["error"]
    only = await app.http.post("/documents", json={"documents": [{"text": "y" * 50}]})
    assert only.status_code == 413
    assert only.json()["code"] == "document_too_large"


async def test_unknown_project_is_404(idle_client):
    response = await idle_client.http.post("/documents", json={"project_id": "nope", "documents": [{"text": "a b"}]})
    assert response.status_code == 404
    assert (await idle_client.http.get("/documents", params={"project_id": "nope"})).status_code == 404
    assert (await idle_client.http.get("/pipeline", params={"project_id": "nope"})).status_code == 404
    assert (await idle_client.http.get("/documents/doc-x")).status_code == 404
    assert (await idle_client.http.get("/documents/doc-x/chunks")).status_code == 404


async def test_projects_are_isolated(idle_client):
    await idle_client.http.post("/projects", json={"id": "other"})
    body = {"documents": [{"text": "Shared text."}]}
    a = (await idle_client.http.post("/documents", json=body)).json()["documents"][0]
    b = (await idle_client.http.post("/documents", json={**body, "project_id": "other"})).json()["documents"][0]
    assert a["status"] == b["status"] == "pending"  # same text in another project is not a duplicate
    listed = (await idle_client.http.get("/documents", params={"project_id": "other"})).json()
    assert [d["id"] for d in listed["documents"]] == [b["id"]]
    assert (await idle_client.http.get(f"/documents/{a['id']}", params={"project_id": "other"})).status_code == 200


async def test_list_filters_and_counts(idle_client):
    await idle_client.http.post("/documents", json={"documents": [{"text": f"Text number {i}."} for i in range(5)]})
    async with idle_client.container.db.transaction() as conn:
        await conn.execute(
            update(documents).where(documents.c.content == "Text number 0.").values(status="failed", error="boom")
        )
    page = (await idle_client.http.get("/documents", params={"limit": 2, "offset": 1})).json()
    assert len(page["documents"]) == 2 and page["total"] == 5
    assert page["counts"] == {"pending": 4, "processing": 0, "processed": 0, "failed": 1, "cancelled": 0}
    failed = (await idle_client.http.get("/documents", params={"status": "failed"})).json()
    assert [d["error"] for d in failed["documents"]] == ["boom"] and failed["total"] == 1
    assert (await idle_client.http.get("/documents", params={"status": "weird"})).status_code == 422
    assert (await idle_client.http.get("/documents", params={"limit": 0})).status_code == 422


async def test_retry_only_failed(idle_client):
    doc_id = (await idle_client.http.post("/documents", json={"documents": [{"text": "Retry me."}]})).json()[
        "documents"
    ][0]["id"]
    conflict = await idle_client.http.post(f"/documents/{doc_id}/retry")
    assert conflict.status_code == 409 and conflict.json()["code"] == "document_not_failed"
    async with idle_client.container.db.transaction() as conn:
        await conn.execute(update(documents).values(status="failed", error="x", attempts=3))
    ok = await idle_client.http.post(f"/documents/{doc_id}/retry", json={"project_id": "default"})
    assert ok.status_code == 200 and ok.json()["status"] == "pending"
    detail = (await idle_client.http.get(f"/documents/{doc_id}")).json()
    assert detail["status"] == "pending" and detail["error"] is None and detail["attempts"] == 0
    assert (await idle_client.http.post("/documents/missing/retry")).status_code == 404


async def test_pipeline_status(idle_client):
    await idle_client.http.post("/documents", json={"documents": [{"text": "Queued one."}, {"text": "Queued two."}]})
    body = (await idle_client.http.get("/pipeline")).json()
    assert body["queue_depth"] == 2 and body["global_queue_depth"] == 2
    assert body["by_status"]["pending"] == 2 and body["in_flight"] == []
    assert body["local_worker"] is None


async def test_chunks_of_unprocessed_document_is_empty_list(idle_client):
    doc_id = (await idle_client.http.post("/documents", json={"documents": [{"text": "Nothing yet."}]})).json()[
        "documents"
    ][0]["id"]
    response = await idle_client.http.get(f"/documents/{doc_id}/chunks")
    assert response.json() == {"document_id": doc_id, "chunks": []}
    assert await _count(idle_client, chunks) == 0


async def test_upload_files_mixed_valid_and_invalid(idle_client):
    files = [
        ("files", ("notes.txt", b"Uploaded text about Alice.", "text/plain")),
        ("files", ("readme.md", b"# Title\n\nMarkdown about Bob.", "text/markdown")),
        ("files", ("page.html", b"<html><script>x()</script><p>Carol in HTML.</p></html>", "text/html")),
        ("files", ("program.exe", b"MZ\x00\x01", "application/octet-stream")),
        ("files", ("empty.txt", b"   ", "text/plain")),
    ]
    response = await idle_client.http.post("/documents/upload", files=files, data={"project_id": "default"})
    assert response.status_code == 202
    items = response.json()["documents"]
    assert [i["status"] for i in items] == ["pending", "pending", "pending", "rejected", "rejected"]
    assert [i["file_path"] for i in items] == ["notes.txt", "readme.md", "page.html", "program.exe", "empty.txt"]
    assert "unsupported" in items[3]["error"] and "empty" in items[4]["error"]
    html = (await idle_client.http.get(f"/documents/{items[2]['id']}")).json()
    assert "Carol in HTML." in html["content_summary"] and "x()" not in html["content_summary"]
    assert html["file_path"] == "page.html"
    assert await _count(idle_client, documents) == 3


async def test_an_uploaded_file_name_is_kept_to_the_length_of_a_json_file_path(idle_client):
    long_name = "notes-" * 500 + ".txt"  # 3,004 characters, over the 1,024 a JSON file_path may have
    files = [("files", (long_name, b"Notes about Alice.", "text/plain"))]
    response = await idle_client.http.post("/documents/upload", files=files, data={"project_id": "default"})
    assert response.status_code == 202, response.text
    [item] = response.json()["documents"]
    assert item["status"] == "pending" and item["file_path"] == long_name[:1020] + ".txt"


async def test_upload_all_invalid_is_4xx(idle_client, make_settings, start_app):
    bad = await idle_client.http.post("/documents/upload", files=[("files", ("a.bin", b"\x00\x01", "x/y"))])
    assert bad.status_code == 422 and bad.json()["code"] == "invalid_documents"
    small = await start_app(make_settings(worker_enabled=False, max_upload_bytes=1024))
    big = await small.http.post("/documents/upload", files=[("files", ("big.txt", b"a" * 2000, "text/plain"))])
    assert big.status_code == 413
    missing = await idle_client.http.post("/documents/upload", data={"project_id": "default"})
    assert missing.status_code == 422
    unknown = await idle_client.http.post(
        "/documents/upload", data={"project_id": "nope"}, files=[("files", ("a.txt", b"text", "text/plain"))]
    )
    assert unknown.status_code == 404
    assert await _count(idle_client, documents) == 0


async def test_ingest_without_llm_is_503_nothing_stored(make_settings, start_app):
    app = await start_app(make_settings(llm_model=None, llm_base_url=None, worker_enabled=False))
    response = await app.http.post("/documents", json={"documents": [{"text": "Needs a model."}]})
    assert response.status_code == 503 and response.json()["code"] == "llm_not_configured"
    assert await _count(app, documents) == 0
