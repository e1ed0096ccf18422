"""The entity panel's review of automatic merges in Chromium: an entity resolution merged "Dr. Okafor" into
"Ngozi Okafor"; the panel shows the merge with its rule, evidence and document, and Undo makes "Dr. Okafor" an
entity of its own again."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from tests.graph.test_unmerge import RECORDS
from tests.ingest.test_resolution_ingest import install
from tests.support.live_server import LiveServer
from tests.ui.conftest import API_KEY

pytestmark = pytest.mark.slow
PROJECT = "merges"
TIMEOUT = 60_000


def _http(server: LiveServer) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {API_KEY}"}, timeout=30)


def _ingest(http: httpx.Client, marker: str) -> None:
    answer = http.post(
        "/documents",
        json={"project_id": PROJECT, "documents": [{"text": marker, "file_path": f"{marker.replace(' ', '-')}.txt"}]},
    )
    assert answer.status_code in (200, 202), answer.text
    document_id = answer.json()["documents"][0]["id"]
    deadline = time.monotonic() + 60
    while http.get(f"/documents/{document_id}", params={"project_id": PROJECT}).json()["status"] != "processed":
        assert time.monotonic() < deadline, "the document was not processed"
        time.sleep(0.1)


def test_undo_an_automatic_merge_from_the_entity_panel(
    ui_server: LiveServer, browser, fake_llm, artifacts: Path
) -> None:  # noqa: ANN001
    from playwright.sync_api import expect

    install(fake_llm, RECORDS)
    with _http(ui_server) as http:
        assert http.post("/projects", json={"id": PROJECT}).status_code in (201, 409)
        _ingest(http, "first doc")
        _ingest(http, "second doc")
        listed = http.get("/entities", params={"project_id": PROJECT}).json()["entities"]
        assert {e["name"]: e["aliases"] for e in listed}["Ngozi Okafor"] == ["Dr. Okafor"]

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(f"sessionStorage.setItem('lightrag.apiKey', '{API_KEY}');")
    page = context.new_page()
    page.set_default_timeout(TIMEOUT)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: d.accept())  # the confirm() of undo
    page.goto(f"{ui_server.url}/ui/#/graph?project={PROJECT}&entity=Ngozi%20Okafor")
    expect(page.locator("#h-entity")).to_have_text("Ngozi Okafor", timeout=TIMEOUT)
    entry = page.locator("#entity-merge-ledger li.merge-entry")
    expect(entry).to_have_count(1, timeout=TIMEOUT)
    expect(entry).to_contain_text("Dr. Okafor", timeout=TIMEOUT)
    expect(entry).to_contain_text("rule partial", timeout=TIMEOUT)
    expect(entry).to_contain_text("second-doc.txt", timeout=TIMEOUT)
    expect(entry.locator("button.merge-accept")).to_be_visible(timeout=TIMEOUT)
    expect(entry.locator("button.merge-reject")).to_be_visible(timeout=TIMEOUT)
    page.locator("#entity-merges").screenshot(path=artifacts / "entity-merges.png")

    entry.locator("button.merge-undo").click()
    expect(page.locator("#toasts")).to_contain_text("Restored Dr. Okafor", timeout=TIMEOUT)
    expect(page.locator("#entity-merge-ledger")).to_contain_text("nothing standing", timeout=TIMEOUT)
    expect(page.locator("#entity-merge-ledger")).to_contain_text("undone", timeout=TIMEOUT)
    with _http(ui_server) as http:
        restored = http.get("/entities/Dr. Okafor", params={"project_id": PROJECT}).json()
        assert restored["name"] == "Dr. Okafor"
        [ledger] = http.get("/entities/merges", params={"project_id": PROJECT}).json()["entries"]
        assert ledger["status"] == "undone"
    assert not errors
    context.close()
