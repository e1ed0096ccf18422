"""The entity panel's review of automatic merges in Chromium: an entity resolution merged "Dr. Okafor" into
"Ngozi Okafor"; the panel shows the merge with its rule, evidence and document, and Undo makes "Dr. Okafor" an
entity of its own again. With ENTITY_RESOLUTION=suggest, the panel lists the suggested duplicates with their
evidence: Accept merges the pair (and the panel offers to undo it), Reject keeps it apart and hides it."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from tests.graph.test_unmerge import RECORDS
from tests.ingest.test_resolution_ingest import RECORDS as SUGGESTED
from tests.ingest.test_resolution_ingest import install
from tests.support.database import PgCluster
from tests.support.fakes.openai_server import FakeOpenAI
from tests.support.live_server import LiveServer, live_app
from tests.ui.conftest import API_KEY

pytestmark = pytest.mark.slow
PROJECT = "merges"
TIMEOUT = 60_000


@pytest.fixture(scope="module")
def suggest_server(pg_cluster: PgCluster, fake_server: FakeOpenAI) -> Iterator[LiveServer]:
    with live_app(
        pg_cluster, fake_server, f"ui_suggest_{os.getpid()}", api_keys=[API_KEY], entity_resolution="suggest"
    ) as server:
        yield server


def _http(server: LiveServer) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {API_KEY}"}, timeout=30)


def _page(browser, server: LiveServer, entity: str, errors: list[str]):  # noqa: ANN001, ANN202
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(f"sessionStorage.setItem('lightrag.apiKey', '{API_KEY}');")
    page = context.new_page()
    page.set_default_timeout(TIMEOUT)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: d.accept())  # the confirm() of undo and accept
    page.goto(f"{server.url}/ui/#/graph?project={PROJECT}&entity={quote(entity)}")
    return context, page


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


def _project_with(server: LiveServer, fake_llm, records: dict[str, list[str]], markers: list[str]) -> None:  # noqa: ANN001
    """The test project, holding the documents `markers` ingested one after the other."""
    install(fake_llm, records)
    with _http(server) as http:
        assert http.post("/projects", json={"id": PROJECT}).status_code in (201, 409)
        for marker in markers:
            _ingest(http, marker)


def test_undo_an_automatic_merge_from_the_entity_panel(
    ui_server: LiveServer, browser, fake_llm, artifacts: Path
) -> None:  # noqa: ANN001
    from playwright.sync_api import expect

    _project_with(ui_server, fake_llm, RECORDS, ["first doc", "second doc"])
    with _http(ui_server) as http:
        listed = http.get("/entities", params={"project_id": PROJECT}).json()["entities"]
        assert {e["name"]: e["aliases"] for e in listed}["Ngozi Okafor"] == ["Dr. Okafor"]

    errors: list[str] = []
    context, page = _page(browser, ui_server, "Ngozi Okafor", errors)
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


def test_accept_undo_and_reject_suggested_duplicates_from_the_entity_panel(
    suggest_server: LiveServer, browser, fake_llm, artifacts: Path
) -> None:  # noqa: ANN001
    from playwright.sync_api import expect

    _project_with(suggest_server, fake_llm, SUGGESTED, ["doc one", "doc two"])
    with _http(suggest_server) as http:
        suggested = http.get("/entities/duplicates", params={"project_id": PROJECT}).json()["pairs"]
        pairs = {frozenset((p["entity_a"], p["entity_b"])) for p in suggested}
        assert frozenset(("Dr. Mira Tolven", "Mira Tolven")) in pairs, suggested
        assert frozenset(("ACME HOLDINGS", "Acme Holdings Ltd.")) in pairs, suggested

    errors: list[str] = []
    context, page = _page(browser, suggest_server, "Mira Tolven", errors)
    expect(page.locator("#h-entity")).to_have_text("Mira Tolven", timeout=TIMEOUT)
    pair = page.locator("#entity-duplicates li.duplicate-pair").filter(has_text="Dr. Mira Tolven")
    expect(pair).to_have_count(1, timeout=TIMEOUT)
    expect(pair.locator("ul.description li").first).to_be_visible(timeout=TIMEOUT)  # the evidence
    page.locator("#entity-merges").screenshot(path=artifacts / "entity-duplicates.png")
    pair.locator("button.duplicate-accept").click()
    expect(page.locator("#toasts")).to_contain_text("Merged Dr. Mira Tolven into Mira Tolven", timeout=TIMEOUT)
    entry = page.locator("#entity-merge-ledger li.merge-entry")
    expect(entry).to_contain_text("Dr. Mira Tolven", timeout=TIMEOUT)
    expect(entry).to_contain_text("accepted suggestion", timeout=TIMEOUT)
    with _http(suggest_server) as http:
        merged = http.get("/entities/Mira Tolven", params={"project_id": PROJECT}).json()
        assert "Dr. Mira Tolven" in merged["aliases"], merged
    page.locator("#entity-merges").screenshot(path=artifacts / "entity-duplicate-accepted.png")
    entry.locator("button.merge-undo").click()  # the accepted suggestion undone
    expect(page.locator("#toasts")).to_contain_text("Restored Dr. Mira Tolven", timeout=TIMEOUT)
    expect(page.locator("#entity-merge-ledger")).to_contain_text("undone", timeout=TIMEOUT)

    page.goto(f"{suggest_server.url}/ui/#/graph?project={PROJECT}&entity={quote('Acme Holdings Ltd.')}")
    expect(page.locator("#h-entity")).to_have_text("Acme Holdings Ltd.", timeout=TIMEOUT)
    pair = page.locator("#entity-duplicates li.duplicate-pair").filter(has_text="ACME HOLDINGS")
    expect(pair).to_have_count(1, timeout=TIMEOUT)
    pair.locator("button.duplicate-reject").click()
    expect(page.locator("#toasts")).to_contain_text(
        "ACME HOLDINGS and Acme Holdings Ltd. are kept apart", timeout=TIMEOUT
    )
    expect(page.locator("#entity-duplicates li.duplicate-pair").filter(has_text="ACME HOLDINGS")).to_have_count(
        0, timeout=TIMEOUT
    )

    with _http(suggest_server) as http:
        assert http.get("/entities/Dr. Mira Tolven", params={"project_id": PROJECT}).json()["name"] == "Dr. Mira Tolven"
        left = http.get("/entities/duplicates", params={"project_id": PROJECT}).json()["pairs"]
        names = [{p["entity_a"], p["entity_b"]} for p in left]
        assert {"ACME HOLDINGS", "Acme Holdings Ltd."} not in names  # rejected
        assert {"Dr. Mira Tolven", "Mira Tolven"} not in names  # undone, and so kept apart
        for name in ("ACME HOLDINGS", "Acme Holdings Ltd."):
            assert http.get(f"/entities/{name}", params={"project_id": PROJECT}).json()["name"] == name
    assert not errors
    context.close()
