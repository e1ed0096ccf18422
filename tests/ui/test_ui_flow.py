"""The web UI end to end in Chromium: key prompt (a wrong key is refused), upload of two files until they are
processed, a streamed mix-mode answer with references (each opening its chunk), an entity in the graph (merge,
edit, rename), an xlsx download, every page at 800 px, pasted text and a delete of many. Screenshots of each page
go to tests/ui/artifacts/."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from openpyxl import load_workbook

from tests.support.live_server import LiveServer
from tests.ui.conftest import API_KEY

pytestmark = pytest.mark.slow

DOCS = {
    "platform.md": "# Platform\n\nAlice Chen leads the Platform Team in Berlin. Alice Chen reports to Bob Ortiz.\n",
    "acme.txt": "Bob Ortiz runs Acme Corp from Munich. Ally joined Acme Corp last year and works with Bob Ortiz.\n",
}
TIMEOUT = 60_000


def _api(server: LiveServer) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {API_KEY}"}, timeout=30)


def test_static_files_are_open_and_the_api_is_not(ui_server: LiveServer) -> None:
    with httpx.Client(base_url=ui_server.url) as http:
        root = http.get("/", follow_redirects=False)
        assert root.status_code == 307 and root.headers["location"].endswith("/ui/")
        page = http.get("/ui/")
        assert page.status_code == 200 and 'src="js/main.js"' in page.text
        assert "default-src 'self'" in page.headers["content-security-policy"]
        script = http.get("/ui/vendor/cytoscape/cytoscape.esm.min.js")
        assert script.status_code == 200 and "javascript" in script.headers["content-type"]
        assert http.get("/ui/js/missing.js").status_code == 404
        assert http.get("/documents").status_code == 401
        assert http.post("/ui/js/main.js").status_code == 401  # only reading the files is open


def test_everything_the_page_loads_is_served_by_the_service() -> None:
    static = Path(__file__).resolve().parents[2] / "app" / "web" / "ui_static"
    for path in [*static.rglob("*.html"), *static.rglob("*.css"), *(static / "js").rglob("*.js")]:
        assert not re.search(
            r"(src|href)=[\"']?(https?:)?//|import .* from ['\"]https?:|url\((https?:)?//", path.read_text()
        ), f"{path} loads something from elsewhere"


def test_the_whole_job_in_a_browser(ui_server: LiveServer, browser, artifacts: Path) -> None:  # noqa: ANN001
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT)
    elsewhere, errors = [], []
    own = (ui_server.url, "data:", "blob:")
    page.on("request", lambda r: None if r.url.startswith(own) else elsewhere.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: d.accept())  # the confirm() of merge

    # The page loads without a key, then asks for one; a wrong key is refused, the right one is kept.
    page.goto(ui_server.url + "/")
    expect(page).to_have_url(re.compile(r"/ui/#/documents$"))
    dialog = page.locator("#key-dialog")
    expect(dialog).to_be_visible()
    page.fill("#key-input", "not-the-key")
    page.click("#key-form button[type=submit]")
    expect(page.locator("#key-reason")).to_contain_text("refused")
    expect(dialog).to_be_visible()
    _screenshot(page, artifacts / "api-key.png")
    page.fill("#key-input", API_KEY)
    page.click("#key-form button[type=submit]")
    expect(dialog).to_be_hidden()
    expect(page.locator("#doc-table .empty")).to_contain_text("No documents")

    # Upload two files; both reach processed, with the pipeline's progress on the page.
    page.set_input_files(
        "#file-input",
        [
            {
                "name": name,
                "mimeType": "text/markdown" if name.endswith(".md") else "text/plain",
                "buffer": text.encode(),
            }
            for name, text in DOCS.items()
        ],
    )
    expect(page.locator("#upload-result li")).to_have_count(2)
    expect(page.locator('#doc-table tr[data-status="processed"]')).to_have_count(2, timeout=TIMEOUT)
    expect(page.locator("#pipeline-label")).to_have_text("2 done (of 2)")
    expect(page.locator("#doc-table")).to_contain_text("platform.md")
    _screenshot(page, artifacts / "documents.png")

    # A streamed answer in mix mode, with references linked to the cited chunks.
    page.click("a[data-page=query]")
    page.fill("#question", "Who leads the Platform Team?")
    page.select_option("#mode", "mix")
    page.click("#ask")
    expect(page.locator("#ask")).to_have_text("Ask", timeout=TIMEOUT)
    answer = page.locator("#answer-0")
    expect(answer).not_to_be_empty()
    expect(page.locator(".references a.reference").first).to_be_visible()
    expect(page.locator("#inspector")).to_contain_text("Alice Chen")
    expect(page.locator("#usage")).to_contain_text("Token usage")
    # A follow-up question sends the conversation so far.
    page.fill("#question", "Where is the Platform Team?")
    with page.expect_request(lambda r: r.url.endswith("/query/stream")) as sent:
        page.click("#ask")
    history = sent.value.post_data_json["conversation_history"]
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert history[0]["content"] == "Who leads the Platform Team?"
    expect(page.locator("#ask")).to_have_text("Ask", timeout=TIMEOUT)
    expect(page.locator("#answer-1")).not_to_be_empty()
    _screenshot(page, artifacts / "query.png")
    # A reference opens its chunk beside the answer, and from there in the document's chunk list.
    page.locator(".references a.reference").first.click()
    expect(page.locator("#source-viewer .source-text")).not_to_be_empty()
    page.locator("#source-viewer").get_by_role("link", name="open in Documents").click()
    expect(page.locator("#doc-chunks li.highlight")).to_be_visible()

    # The graph around an entity; the side panel merges another entity into it.
    page.goto(ui_server.url + "/ui/#/graph?entity=" + "Alice%20Chen")
    expect(page.locator("#h-entity")).to_have_text("Alice Chen")
    expect(page.locator("#node-list option")).not_to_have_count(1)
    expect(page.locator("#legend .legend-item").first).to_be_visible()
    with _api(ui_server) as http:
        assert http.get("/entities/Ally").status_code == 200
    page.locator("summary", has_text="Merge others into this one").click()
    page.fill("#merge-sources", "Ally")
    page.click("#merge-submit")
    expect(page.locator("#toasts")).to_contain_text("Merged Ally into Alice Chen")
    expect(page.locator("#alias-list .alias-name")).to_have_text(["Ally"])
    with _api(ui_server) as http:
        merged = http.get("/entities/Ally").json()  # the merged name is now an alias of the target
        assert merged["name"] == "Alice Chen" and "Ally" in merged["aliases"]
        assert "Ally" not in [n["id"] for n in http.get("/graph", params={"label": "*"}).json()["nodes"]]

    # Edit a type (the colours follow it) and rename another entity, picked from the node list.
    _edit_type(page, "person")
    page.select_option("#node-list", "Acme Corp")
    expect(page.locator("#h-entity")).to_have_text("Acme Corp")
    _edit_type(page, "organization")
    page.locator("summary", has_text="Rename").click()
    page.fill("#entity-new-name", "Acme Corporation")
    page.locator("#entity-new-name ~ button[type=submit]").click()
    expect(page.locator("#h-entity")).to_have_text("Acme Corporation")
    expect(page.locator("#legend .legend-item")).to_have_count(3)
    expect(page.locator("#entity-delete")).to_be_visible()
    _screenshot(page, artifacts / "graph.png")
    with _api(ui_server) as http:
        assert http.get("/entities/Acme Corporation").json()["entity_type"] == "organization"
        assert http.get("/entities/Alice Chen").json()["entity_type"] == "person"

    # Projects & settings: an xlsx export downloads.
    page.click("a[data-page=projects]")
    expect(page.locator("#project-list")).to_contain_text("default")
    with page.expect_download() as download_info:
        page.click("#export-xlsx")
    download = download_info.value
    assert download.suggested_filename.endswith(".xlsx")
    saved = artifacts / download.suggested_filename
    download.save_as(saved)
    assert "entities" in [s.lower() for s in load_workbook(saved, read_only=True).sheetnames]
    expect(page.locator("#export-status")).to_contain_text("Downloaded")
    _screenshot(page, artifacts / "projects.png")

    # 800 px wide: every page fits without sideways scrolling.
    page.set_viewport_size({"width": 800, "height": 1000})
    for name in ("documents", "query", "graph", "projects"):
        page.click(f"a[data-page={name}]")
        expect(page.locator(f"#page-{name}")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 800, f"{name} is wider than 800 px"
        _screenshot(page, artifacts / f"{name}-800.png")

    # Pasted text joins the two files; then all three are selected and deleted at once.
    page.click("a[data-page=documents]")
    page.fill("#paste-text", "Carol Diaz runs the Data Team in Lisbon.")
    page.fill("#paste-name", "carol.md")
    page.click("form.paste button[type=submit]")
    expect(page.locator('#doc-table tr[data-status="processed"]')).to_have_count(3, timeout=TIMEOUT)
    page.check("#doc-table thead input[type=checkbox]")
    page.click("#delete-selected")
    expect(page.locator("#doc-table .empty")).to_contain_text("No documents", timeout=TIMEOUT)
    with _api(ui_server) as http:
        assert http.get("/documents").json()["total"] == 0

    assert not elsewhere, f"the page loaded something from elsewhere: {elsewhere}"
    assert not errors, errors
    context.close()


def _edit_type(page, entity_type: str) -> None:  # noqa: ANN001
    from playwright.sync_api import expect

    page.locator("summary", has_text="Edit").click()
    page.fill("#entity-type", entity_type)
    page.locator("#entity-type ~ button[type=submit]").click()
    expect(page.locator("#entity-panel .badge")).to_have_text(entity_type)


def _screenshot(page, path: Path) -> None:  # noqa: ANN001
    """The whole page, without the passing notices (they cover what the picture is for)."""
    page.evaluate("document.querySelector('#toasts').replaceChildren()")
    page.screenshot(path=path, full_page=True)
