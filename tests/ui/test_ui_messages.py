"""Messages for people in Chromium: the key prompt, a refused key, the service out of reach (requests made to
fail), a key scoped to other projects (switched to one it may use, offered only those), notices that can be
dismissed and cover no button, failures never shown as success, documents beyond one page of 1,000, and the
projects page: a project's settings edited, a project deleted after a confirmation naming it, the health card
and the model check."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.support.database import PgCluster
from tests.support.fakes.openai_server import FakeOpenAI
from tests.support.live_server import LiveServer, live_app
from tests.ui.conftest import API_KEY

pytestmark = pytest.mark.slow

SCOPED_KEY = "scoped-ui-key"
TIMEOUT = 60_000
DANGER = "rgb(180, 35, 24)"  # --danger in app.css


@pytest.fixture(scope="module")
def server(pg_cluster: PgCluster, fake_server: FakeOpenAI) -> Iterator[LiveServer]:
    keys = [API_KEY, f"{SCOPED_KEY}:gamma|delta"]
    with live_app(pg_cluster, fake_server, f"ui_msg_{os.getpid()}", api_keys=keys) as live:
        with _http(live) as http:
            for project in ("gamma", "delta"):
                assert http.post("/projects", json={"id": project}).status_code == 201
        yield live


def _http(server: LiveServer) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {API_KEY}"}, timeout=30)


def _page(browser, key: str | None = None, width: int = 1280):  # noqa: ANN001, ANN202
    context = browser.new_context(viewport={"width": width, "height": 900})
    if key:
        context.add_init_script(f"sessionStorage.setItem('lightrag.apiKey', '{key}')")
    page = context.new_page()
    page.set_default_timeout(TIMEOUT)
    return context, page


def test_key_prompt_refused_key_and_service_out_of_reach(server: LiveServer, browser, artifacts: Path) -> None:  # noqa: ANN001
    from playwright.sync_api import expect

    context, page = _page(browser)
    page.goto(server.url + "/ui/")
    expect(page.locator("#key-dialog")).to_be_visible()
    expect(page.locator("#key-reason")).to_have_text(
        "This service needs an API key. Enter the key you were given by whoever runs it."
    )
    page.fill("#key-input", "not-the-key")
    page.click("#key-form button[type=submit]")
    expect(page.locator("#key-reason")).to_contain_text("This key was refused")
    expect(page.locator("#key-reason")).to_have_css("color", DANGER)
    page.fill("#key-input", API_KEY)
    page.click("#key-form button[type=submit]")
    expect(page.locator("#key-dialog")).to_be_hidden()
    expect(page.locator("#doc-table .empty")).to_contain_text("No documents")

    # The service stops answering: the page says so in words, not "Failed to fetch".
    page.route("**/documents?*", lambda route: route.abort("connectionrefused"))
    page.click("button:has-text('Refresh')")
    expect(page.locator("#doc-table")).to_contain_text("Cannot reach the service")
    expect(page.locator("#doc-table")).not_to_contain_text("Failed to fetch")
    # A proxy in front of a stopped service answers 502 without the service's JSON: the same message.
    page.unroute("**/documents?*")
    page.route("**/documents?*", lambda route: route.fulfill(status=502, body="Bad Gateway"))
    page.click("button:has-text('Refresh')")
    expect(page.locator("#doc-table")).to_contain_text("Cannot reach the service")
    page.unroute("**/documents?*")
    page.route("**/health", lambda route: route.abort("connectionrefused"))
    page.click("a[data-page=projects]")
    expect(page.locator("#health")).to_contain_text("Cannot reach the service")
    page.screenshot(path=artifacts / "service-down.png", full_page=True)
    context.close()


def test_a_key_scoped_to_other_projects_is_switched_to_one_it_may_use(server: LiveServer, browser) -> None:  # noqa: ANN001
    from playwright.sync_api import expect

    context, page = _page(browser, SCOPED_KEY)
    page.goto(server.url + "/ui/#/documents")
    notice = page.locator("#toasts .toast-warn")
    expect(notice).to_contain_text('This key may not use the project "default"')
    expect(page.locator("#project-select option")).to_have_count(2)
    offered = page.locator("#project-select option").all_inner_texts()
    assert sorted(offered) == ["delta", "gamma"]
    assert page.locator("#project-select").input_value() in offered
    expect(page.locator("#doc-table .empty")).to_contain_text("No documents in")

    # The notice stays until dismissed, and covers no button.
    overlaps = page.evaluate("""() => {
      const boxes = [...document.querySelectorAll('#toasts .toast')].map((t) => t.getBoundingClientRect());
      return [...document.querySelectorAll('button')].filter((b) => !b.closest('#toasts') && b.offsetParent)
        .filter((b) => { const r = b.getBoundingClientRect();
          return boxes.some((t) => r.left < t.right && t.left < r.right && r.top < t.bottom && t.top < r.bottom); })
        .map((b) => b.textContent);
    }""")
    assert overlaps == [], overlaps
    notice.locator(".toast-close").click()
    expect(page.locator("#toasts .toast")).to_have_count(0)
    context.close()


def _fake_documents(total: int):  # noqa: ANN202
    def handle(route) -> None:  # noqa: ANN001
        query = parse_qs(urlsplit(route.request.url).query)
        limit, offset = int(query["limit"][0]), int(query.get("offset", ["0"])[0])
        documents = [
            {
                "id": f"doc-{i:05d}",
                "file_path": f"report-{i:05d}.md",
                "status": "processed",
                "content_length": 1200,
                "chunks_count": 2,
                "entities_count": 3,
                "relations_count": 1,
                "version": 1,
                "attempts": 1,
                "error": None,
                "created_at": "2026-01-01T10:00:00Z",
                "updated_at": f"2026-01-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z",
            }
            for i in range(offset, min(total, offset + limit))
        ]
        body = {
            "documents": documents,
            "total": total,
            "limit": limit,
            "offset": offset,
            "counts": {"processed": total},
        }
        route.fulfill(status=200, content_type="application/json", body=json.dumps(body))

    return handle


PIPELINE = {
    "project_id": "default",
    "queue_depth": 1,
    "global_queue_depth": 1,
    "by_status": {"pending": 0, "processing": 1, "processed": 16, "failed": 3, "cancelled": 0},
    "in_flight": [
        {
            "id": "doc-00001",
            "file_path": "quarterly-report.pdf",
            "claimed_by": "w1",
            "heartbeat_at": None,
            "started_at": None,
            "attempts": 1,
            "stage": "extracting",
            "progress": None,
            "cancel_requested": False,
        }
    ],
    "local_worker": None,
}


def test_failures_never_look_like_success_and_documents_page_beyond_1000(server: LiveServer, browser) -> None:  # noqa: ANN001
    from playwright.sync_api import expect

    context, page = _page(browser, API_KEY, width=800)
    page.route("**/documents?*", _fake_documents(1234))
    page.route(
        "**/pipeline?*",
        lambda route: route.fulfill(status=200, content_type="application/json", body=json.dumps(PIPELINE)),
    )
    page.goto(server.url + "/ui/#/documents")
    label = page.locator("#pipeline-label")
    expect(label).to_contain_text("16 done, 3 failed")
    expect(label).to_have_css("color", DANGER)
    expect(page.locator("#pipeline-progress")).to_have_class("with-failures")
    expect(page.locator("#pipeline-working")).to_contain_text("quarterly-report.pdf")
    expect(page.locator("#pipeline-working")).not_to_contain_text("doc-00001")

    # 1,234 documents: two list requests, shown 100 rows a page.
    expect(page.locator("#doc-range")).to_have_text("1–100 of 1,234 (page 1 of 13)")
    expect(page.locator("#doc-table tbody tr")).to_have_count(100)
    for _ in range(12):
        page.click("#doc-next")
    expect(page.locator("#doc-range")).to_have_text("1201–1234 of 1,234 (page 13 of 13)")
    expect(page.locator("#doc-table tbody tr")).to_have_count(34)
    expect(page.locator("#doc-next")).to_be_disabled()

    # At 800 px the table needs no sideways scrolling: a row's actions are in view.
    wrap = page.locator("#doc-table .table-wrap")
    assert wrap.evaluate("(el) => el.scrollWidth <= el.clientWidth"), "the documents table scrolls sideways at 800 px"
    delete = page.locator("#doc-table tbody tr").first.locator("button", has_text="Delete")
    assert delete.bounding_box()["x"] + delete.bounding_box()["width"] <= 800
    context.close()


def test_projects_page_edits_settings_deletes_and_checks(server: LiveServer, browser, artifacts: Path) -> None:  # noqa: ANN001
    from playwright.sync_api import expect

    with _http(server) as http:
        assert http.post("/projects", json={"id": "scratch", "name": "Scratch pad"}).status_code == 201
    context, page = _page(browser, API_KEY)
    page.goto(server.url + "/ui/#/projects")
    expect(page.locator("#health-status")).to_have_text("The service is ready.")
    expect(page.locator("#health")).to_contain_text("fake-embedding")

    page.click("button[aria-label='Settings of scratch']")
    expect(page.locator("#h-project-edit")).to_have_text("Settings of scratch")
    page.fill("#edit-language", "French")
    page.fill("#edit-chunk_size", "600")
    page.fill("#edit-entity-types", "person, place")
    page.click("#edit-save")
    expect(page.locator("#toasts")).to_contain_text("Saved the settings of scratch")
    expect(page.locator("#project-list")).to_contain_text("French")
    with _http(server) as http:
        settings = {k: v for k, v in http.get("/projects/scratch").json()["settings"].items() if v is not None}
    assert settings == {"language": "French", "chunk_size": 600, "entity_types": ["person", "place"]}

    page.click("#check-model")
    expect(page.locator("#model-verdict")).to_contain_text("fake-llm", timeout=TIMEOUT)
    page.screenshot(path=artifacts / "projects-admin.png", full_page=True)

    asked: list[str] = []
    page.once("dialog", lambda d: (asked.append(d.message), d.accept()))
    page.click("button[aria-label='Delete scratch']")
    expect(page.locator("#toasts")).to_contain_text("Deleted the project scratch")
    assert asked and '"scratch"' in asked[0]
    expect(page.locator("#project-list")).not_to_contain_text("Scratch pad")
    with _http(server) as http:
        assert http.get("/projects/scratch").status_code == 404
    context.close()


def test_the_highest_read_position_is_sent_back(server: LiveServer, browser) -> None:  # noqa: ANN001
    """Behind read replicas the service labels answers with `X-Read-After-LSN`; the page sends the highest one back
    with its later requests so they see what it was told (here the pipeline's answer carries the label)."""
    context, page = _page(browser, API_KEY)
    page.route(
        "**/pipeline?*",
        lambda route: route.fulfill(
            status=200,
            content_type="application/json",
            headers={"X-Read-After-LSN": "2B/0000ABCD"},
            body=json.dumps(PIPELINE),
        ),
    )
    with page.expect_request(lambda request: request.headers.get("x-read-after-lsn") == "2B/0000ABCD") as later:
        page.goto(server.url + "/ui/#/documents")
    assert later.value.url.startswith(server.url)
    context.close()
