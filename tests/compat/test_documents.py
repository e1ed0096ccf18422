"""/documents/* as LightRAG's client and WebUI call them: insert, upload, list, count, track, delete."""

from __future__ import annotations

import httpx

from tests.compat.conftest import ADMIN_KEY, CompatService, wait_for_track

DOC_FIELDS = {
    "id",
    "content_summary",
    "content_length",
    "status",
    "created_at",
    "updated_at",
    "track_id",
    "chunks_count",
    "error_msg",
    "metadata",
    "file_path",
}


def test_insert_text_is_tracked_to_processed(compat_service: CompatService):
    with compat_service.http(workspace="other") as http:
        answer = http.post(
            "/documents/text", json={"text": "Algernon is a laboratory mouse.", "file_source": "mouse.txt"}
        )
        assert answer.status_code == 200
        body = answer.json()
        assert body["status"] == "success" and body["track_id"].startswith("insert_")
        tracked = wait_for_track(http, body["track_id"])
    assert tracked["track_id"] == body["track_id"] and tracked["total_count"] == 1
    doc = tracked["documents"][0]
    assert set(doc) == DOC_FIELDS
    assert doc["status"] == "processed" and doc["file_path"] == "mouse.txt" and doc["track_id"] == body["track_id"]
    assert doc["id"].startswith("doc-") and doc["chunks_count"] >= 1 and doc["metadata"] is None
    assert tracked["status_summary"] == {"processed": 1}


def test_same_text_again_is_duplicated_without_a_track_id(compat_service: CompatService):
    with compat_service.http(workspace="other") as http:
        first = http.post("/documents/text", json={"text": "Burt Selden runs the maze tests."}).json()
        wait_for_track(http, first["track_id"])
        again = http.post("/documents/text", json={"text": "Burt Selden runs the maze tests."}).json()
    assert again["status"] == "duplicated" and again["track_id"] == ""


def test_insert_texts_with_a_duplicate_is_partial_success(compat_service: CompatService):
    with compat_service.http(workspace="other") as http:
        body = http.post(
            "/documents/texts",
            json={
                "texts": [
                    "Fay Lillian paints in her apartment.",
                    "Fay Lillian paints in her apartment.",
                    "Matt Gordon sells barber supplies.",
                ],
                "file_sources": ["fay.txt"],
            },
        ).json()
        assert body["status"] == "partial_success" and "1 already stored" in body["message"]
        tracked = wait_for_track(http, body["track_id"])
    assert tracked["total_count"] == 2
    assert sorted(d["file_path"] for d in tracked["documents"]) == ["fay.txt", "unknown_source"]


def test_multipart_upload_like_the_webui(compat_service: CompatService):
    with compat_service.http(workspace="other") as http:
        answer = http.post(
            "/documents/upload",
            files={"file": ("warren.md", b"# Warren\n\nThe Warren home is a state institution.", "text/markdown")},
        )
        body = answer.json()
        assert answer.status_code == 200 and body["status"] == "success" and body["track_id"].startswith("upload_")
        assert "warren.md" in body["message"]
        assert wait_for_track(http, body["track_id"])["documents"][0]["file_path"] == "warren.md"
        refused = http.post("/documents/upload", files={"file": ("x.bin", b"\x00\x01\x02", "application/octet-stream")})
    assert refused.status_code == 422 and refused.json()["code"] == "invalid_documents"


def test_paginated_sorted_and_filtered_with_counts(compat_service: CompatService):
    with compat_service.http() as http:
        page = http.post(
            "/documents/paginated",
            json={
                "page": 1,
                "page_size": 10,
                "sort_field": "file_path",
                "sort_direction": "asc",
                "status_filter": "PROCESSED",
            },
        )
        counts = http.get("/documents/status_counts").json()
    assert page.status_code == 200
    body = page.json()
    assert body["pagination"] == {
        "page": 1,
        "page_size": 10,
        "total_count": 1,
        "total_pages": 1,
        "has_next": False,
        "has_prev": False,
    }
    assert [d["file_path"] for d in body["documents"]] == ["story.txt"]
    assert set(body["documents"][0]) == DOC_FIELDS
    assert body["status_counts"] == counts["status_counts"]
    assert counts["status_counts"]["processed"] == 1 and counts["status_counts"]["all"] == 1


def test_paginated_rejects_a_page_size_lightrag_rejects(compat_service: CompatService):
    with compat_service.http() as http:
        answer = http.post("/documents/paginated", json={"page_size": 5})
    assert answer.status_code == 422 and answer.json()["code"] == "validation_error"


def test_pipeline_status_shape(compat_service: CompatService):
    with compat_service.http() as http:
        body = http.get("/documents/pipeline_status").json()
    assert body["busy"] is False and body["docs"] == 0 and body["job_name"] == "Default Job"
    assert {
        "autoscanned",
        "job_start",
        "batchs",
        "cur_batch",
        "request_pending",
        "latest_message",
        "history_messages",
        "update_status",
    } <= set(body)
    assert "1 processed" in body["latest_message"]


def test_unknown_track_id_lists_nothing(compat_service: CompatService):
    with compat_service.http() as http:
        body = http.get("/documents/track_status/insert_19990101_000000_deadbeef").json()
    assert body == {
        "track_id": "insert_19990101_000000_deadbeef",
        "documents": [],
        "total_count": 0,
        "status_summary": {},
    }


def test_delete_document_batch(compat_service: CompatService):
    with compat_service.http(workspace="other") as http:
        body = http.post(
            "/documents/texts", json={"texts": ["Hilda is a nurse at Beekman.", "Gimpy is a baker at Donner's."]}
        ).json()
        ids = [d["id"] for d in wait_for_track(http, body["track_id"])["documents"]]
        missing = http.request("DELETE", "/documents/delete_document", json={"doc_ids": [*ids, "doc-missing"]})
        assert missing.status_code == 404 and missing.json()["code"] == "document_not_found"
        assert http.get(f"/documents/track_status/{body['track_id']}").json()["total_count"] == 2  # none deleted
        cache = http.request("DELETE", "/documents/delete_document", json={"doc_ids": ids, "delete_llm_cache": True})
        assert cache.status_code == 501 and cache.json()["code"] == "not_supported"

        answer = http.request("DELETE", "/documents/delete_document", json={"doc_ids": ids, "delete_file": False})
        assert answer.status_code == 200
        result = answer.json()
        assert result["status"] == "deletion_started" and result["doc_id"] == ", ".join(ids)
        assert result["message"].startswith("Deleted 2 documents")
        assert http.get(f"/documents/track_status/{body['track_id']}").json()["total_count"] == 0
        duplicate = http.request("DELETE", "/documents/delete_document", json={"doc_ids": ["a", "a"]})
    assert duplicate.status_code == 422


def test_more_sources_than_texts_and_preprocessed_filter(compat_service: CompatService):
    with compat_service.http() as http:
        mismatch = http.post("/documents/texts", json={"texts": ["One text only."], "file_sources": ["a", "b"]})
        preprocessed = http.post("/documents/paginated", json={"status_filter": "preprocessed"}).json()
    assert mismatch.status_code == 422 and mismatch.json()["code"] == "validation_error"
    assert preprocessed["documents"] == [] and preprocessed["pagination"]["total_count"] == 0


def test_inserting_new_text_under_a_stored_file_source_updates_that_document(compat_service: CompatService):
    with compat_service.http(workspace="other") as http:
        first = http.post(
            "/documents/text", json={"text": "Wilma Strand tends the Gullrock light.", "file_source": "strand.txt"}
        ).json()
        doc = wait_for_track(http, first["track_id"])["documents"][0]
        second = http.post(
            "/documents/text", json={"text": "Wilma Strand tends the Ravenholm light.", "file_source": "strand.txt"}
        ).json()
        assert second["status"] == "success", second
        tracked = wait_for_track(http, second["track_id"])
        assert [d["status"] for d in tracked["documents"]] == ["processed"]
        listed = http.post("/documents/paginated", json={"page": 1, "page_size": 100}).json()["documents"]
    same_source = [d for d in listed if d["file_path"] == "strand.txt"]
    assert [d["id"] for d in same_source] == [doc["id"]]
    assert "Ravenholm" in same_source[0]["content_summary"]


def test_a_source_several_documents_share_is_a_failure_naming_them(compat_service: CompatService):
    """Two documents stored under one name through the service's own API: a LightRAG insert under that source
    would update one of them by guess; nothing is enqueued and the answer says why (not "duplicated")."""
    with httpx.Client(base_url=compat_service.url, headers={"X-API-Key": ADMIN_KEY}) as root:
        items = [{"text": text, "file_path": "shared.txt"} for text in ("Anna Vell sings.", "Otto Vell paints.")]
        stored = root.post("/documents", json={"project_id": "other", "documents": items, "wait": True})
        assert [d["status"] for d in stored.json()["documents"]] == ["processed", "processed"]
    with compat_service.http(workspace="other") as http:
        body = http.post("/documents/text", json={"text": "Anna Vell dances.", "file_source": "shared.txt"}).json()
    assert body["status"] == "failure" and body["track_id"] == ""
    assert "nothing was enqueued" in body["message"] and "2 documents are named 'shared.txt'" in body["message"]
