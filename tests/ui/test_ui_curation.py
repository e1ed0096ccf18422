"""Curating the graph in Chromium, each change checked through the API afterwards: a new entity (its name
holding a comma); another name added to an entity and detached again, and a name already another entity's
refused with the reason shown; entities merged one name at a time, so a name holding a comma stays one name; a
relation added from the entity panel; a relation (a clicked edge) edited and deleted, the drawing following."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.live_server import LiveServer
from tests.ui.conftest import API_KEY, ingested, keyed_page

pytestmark = pytest.mark.slow

PROJECT = "curation"
TEXT = (
    "Alice Chen works with Hub Corp. Bob Ortiz works with Hub Corp. Carol Diaz works with Hub Corp. "
    "Alice Chen mentors Erin Park.\n"
)
TIMEOUT = 60_000


def _http(server: LiveServer) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {API_KEY}"}, timeout=30)


@pytest.fixture
def graph(ui_server: LiveServer) -> None:
    ingested(ui_server, PROJECT, TEXT, "team.md")


@pytest.fixture
def page(ui_server: LiveServer, graph: None, browser) -> Iterator:  # noqa: ANN001 (playwright's Page)
    """The graph page of the project, drawn; no page error may have happened by the end of the test."""
    from playwright.sync_api import expect

    # the confirm() of detach, merge and delete answered yes
    with keyed_page(browser, f"{ui_server.url}/ui/#/graph?project={PROJECT}", TIMEOUT, accept_dialogs=True) as page:
        expect(page.locator("#node-list option")).not_to_have_count(1)
        yield page


def _open(page, name: str) -> None:  # noqa: ANN001
    from playwright.sync_api import expect

    page.fill("#entity-search", name)
    page.click("#graph-form button[type=submit]")
    expect(page.locator("#h-entity")).to_have_text(name)


def _entity(http: httpx.Client, name: str) -> httpx.Response:
    return http.get(f"/entities/{name}", params={"project_id": PROJECT})


def test_new_entity_aliases_and_a_merge_of_names_holding_commas(ui_server: LiveServer, page, artifacts: Path) -> None:  # noqa: ANN001
    from playwright.sync_api import expect

    # Two entities made by hand, one of them with a comma in its name.
    for name, description in (("Chen, Alice", "Alice Chen, written family name first."), ("A. Chen", "Initials.")):
        page.click("#graph-new-entity")
        expect(page.locator("#h-entity")).to_have_text("New entity")
        page.fill("#entity-create-name", name)
        page.fill("#entity-create-type", "person")
        page.fill("#entity-create-description", description)
        page.click("#entity-create button[type=submit]")
        expect(page.locator("#h-entity")).to_have_text(name)
    with _http(ui_server) as http:
        assert _entity(http, "Chen, Alice").json()["entity_type"] == "person"

    # Another name for Alice Chen, then a name that is already another entity's: refused, with the reason.
    _open(page, "Alice Chen")
    page.locator("#entity-aliases summary").click()  # closed while there is none
    page.fill("#alias-new", "Ally")
    page.click("#alias-form button[type=submit]")
    expect(page.locator("#alias-list .alias-name")).to_have_text(["Ally"])
    page.fill("#alias-new", "Bob Ortiz")
    page.click("#alias-form button[type=submit]")
    expect(page.locator("#toasts .toast-error")).to_contain_text("Could not add the alias")
    with _http(ui_server) as http:
        assert _entity(http, "Ally").json()["name"] == "Alice Chen"  # the alias reaches the entity
        assert _entity(http, "Bob Ortiz").json()["name"] == "Bob Ortiz"  # still an entity of its own
        assert "Bob Ortiz" not in _entity(http, "Alice Chen").json()["aliases"]

    # Detached again: the name no longer reaches Alice Chen.
    page.locator("#alias-list button.alias-detach").click()
    expect(page.locator("#entity-aliases")).to_contain_text("No other names.")
    with _http(ui_server) as http:
        assert _entity(http, "Ally").status_code == 404

    # Merge "Chen, Alice" and "A. Chen" into Alice Chen, added one at a time: the comma splits nothing.
    page.locator("summary", has_text="Merge others into this one").click()
    page.fill("#merge-sources", "Chen, Alice")
    page.press("#merge-sources", "Enter")
    page.fill("#merge-sources", "Carol Diaz")
    page.click("#merge-add")
    expect(page.locator("#merge-chosen .chip")).to_have_count(2)
    page.locator("#merge-chosen button[aria-label='Remove Carol Diaz']").click()  # changed my mind
    page.fill("#merge-sources", "A. Chen")  # left typed in the box: merged too
    page.click("#merge-submit")
    expect(page.locator("#toasts")).to_contain_text("Merged Chen, Alice; A. Chen into Alice Chen")
    expect(page.locator("#alias-list .alias-name")).to_have_text(["A. Chen", "Chen, Alice"])
    page.screenshot(path=artifacts / "graph-curation.png", full_page=True)
    with _http(ui_server) as http:
        assert sorted(_entity(http, "Alice Chen").json()["aliases"]) == ["A. Chen", "Chen, Alice"]
        assert _entity(http, "Carol Diaz").json()["name"] == "Carol Diaz"
        nodes = {n["id"] for n in http.get("/graph", params={"project_id": PROJECT, "label": "*"}).json()["nodes"]}
        assert "Chen, Alice" not in nodes and "A. Chen" not in nodes and "Carol Diaz" in nodes
        stored = _entity(http, "Alice Chen").json()["description"]
    assert "<SEP>" in stored  # the merge joined three descriptions

    # Edited as one line per fragment (no "<SEP>" to read), stored joined again; one line changed.
    page.locator("#entity-panel summary", has_text="Edit").click()
    shown = page.input_value("#entity-description")
    assert "<SEP>" not in shown and shown.split("\n") == stored.split("<SEP>")
    page.fill("#entity-description", shown.replace("Initials.", "Her initials, as the wiki writes them."))
    page.click("#entity-description ~ button[type=submit]")
    expect(page.locator("#toasts")).to_contain_text("Saved Alice Chen")
    with _http(ui_server) as http:
        assert _entity(http, "Alice Chen").json()["description"] == stored.replace(
            "Initials.", "Her initials, as the wiki writes them."
        )


def test_a_relation_added_edited_and_deleted_in_the_panels(ui_server: LiveServer, page, artifacts: Path) -> None:  # noqa: ANN001
    from playwright.sync_api import expect

    # A relation from Bob Ortiz to Carol Diaz, written in the entity panel.
    _open(page, "Bob Ortiz")
    page.locator("summary", has_text="Add a relation").click()
    page.fill("#relation-new-target", "Carol Diaz")
    page.fill("#relation-new-description", "Bob Ortiz reviews Carol Diaz's designs.")
    page.fill("#relation-new-keywords", "reviews, design")
    page.fill("#relation-new-weight", "2.5")
    page.click("#relation-new button[type=submit]")
    expect(page.locator("#toasts")).to_contain_text("Related Bob Ortiz to Carol Diaz")
    expect(page.locator("#entity-panel .relations")).to_contain_text("Carol Diaz")
    query = {"project_id": PROJECT, "source": "Bob Ortiz", "target": "Carol Diaz"}
    with _http(ui_server) as http:
        made = http.get("/relations/detail", params=query).json()
        assert (set(made["keywords"].split(",")), made["weight"], made["curated"]) == ({"reviews", "design"}, 2.5, True)

    # The edge opens the relation; its keywords, weight and description are edited there.
    _open(page, "Alice Chen")
    edge = next(
        e
        for e in page.evaluate("window.graphView.edges()")
        if {e["source"], e["target"]} == {"Alice Chen", "Erin Park"}
    )
    for close in page.locator("#toasts .toast-close").all():  # one going by itself would move the canvas
        close.click()
    box = page.locator("#graph-canvas").bounding_box()
    page.mouse.click(box["x"] + edge["at"]["x"], box["y"] + edge["at"]["y"])
    expect(page.locator("#h-relation")).to_be_visible()
    page.locator("#entity-panel summary", has_text="Edit").click()
    page.fill("#relation-edit-keywords", "mentoring, career")
    page.fill("#relation-edit-weight", "4")
    page.fill("#relation-edit-description", "Alice Chen has mentored Erin Park since 2020.")
    page.click("#relation-edit button[type=submit]")
    expect(page.locator("#relation-keywords .badge")).to_have_text(["career", "mentoring"])  # stored sorted
    expect(page.locator("#relation-weight")).to_contain_text("weight 4")
    expect(page.locator("#relation-description")).to_have_text("Alice Chen has mentored Erin Park since 2020.")
    page.screenshot(path=artifacts / "graph-relation-edit.png", full_page=True)
    query = {"project_id": PROJECT, "source": "Alice Chen", "target": "Erin Park"}
    with _http(ui_server) as http:
        saved = http.get("/relations/detail", params=query).json()
        assert (saved["keywords"], saved["weight"]) == ("career,mentoring", 4.0)
        assert saved["description"] == "Alice Chen has mentored Erin Park since 2020."

    # Deleted: gone from the store and from the drawing; the panel shows its source entity.
    page.click("#relation-delete")
    expect(page.locator("#toasts")).to_contain_text("Deleted the relation")
    expect(page.locator("#h-entity")).to_be_visible()
    ends = [{e["source"], e["target"]} for e in page.evaluate("window.graphView.edges()")]
    assert {"Alice Chen", "Erin Park"} not in ends
    with _http(ui_server) as http:
        assert http.get("/relations/detail", params=query).status_code == 404
