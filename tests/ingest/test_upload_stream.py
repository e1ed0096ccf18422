"""Uploaded files are cut at MAX_UPLOAD_BYTES while the multipart body streams: an oversized file is rejected
without more than the limit (+1 byte) of it ever being stored, and the other files of the request are taken."""

from __future__ import annotations

from starlette.datastructures import UploadFile


async def test_oversized_file_is_cut_while_streaming(make_settings, start_app, fake_llm, monkeypatch):
    app = await start_app(make_settings(max_upload_bytes=1024, worker_enabled=False))
    stored: dict[str | None, int] = {}
    original = UploadFile.write

    async def counting(self, data: bytes) -> None:
        stored[self.filename] = stored.get(self.filename, 0) + len(data)
        await original(self, data)

    monkeypatch.setattr(UploadFile, "write", counting)
    files = [
        ("files", ("huge.txt", b"h" * 3_000_000, "text/plain")),
        ("files", ("fine.txt", b"Ada met Bea in Cork.", "text/plain")),
    ]
    response = await app.http.post("/documents/upload", files=files, data={"project_id": "default"})
    assert response.status_code == 202, response.text
    huge, fine = response.json()["documents"]
    assert huge["status"] == "rejected" and "limit of 1024 bytes" in huge["error"]
    assert fine["status"] == "pending"
    assert stored == {"huge.txt": 1025, "fine.txt": 20}  # the other 2,998,975 bytes were dropped as they arrived


async def test_upload_form_fields_and_scope_still_checked(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(worker_enabled=False))
    files = [("files", ("a.txt", b"Cy met Di.", "text/plain"))]
    bad = await app.http.post("/documents/upload", files=files, data={"project_id": "not valid!"})
    assert bad.status_code == 422
    missing = await app.http.post("/documents/upload", files=files, data={"project_id": "ghost"})
    assert missing.status_code == 404
    broken = await app.http.post(
        "/documents/upload", content=b"--x\r\nnonsense", headers={"content-type": "multipart/form-data; boundary=x"}
    )
    assert broken.status_code in (400, 422)
