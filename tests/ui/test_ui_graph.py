"""The graph page in Chromium: the default view is the best-connected entities only; a click on a node adds its
neighbours without moving any node already drawn (measured on screen, in pixels); a click on an edge opens the
relation with its sources by file name; a searched entity is selected and open; zoom controls hide the labels
when zoomed out."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.support.live_server import LiveServer
from tests.ui.conftest import ingested, keyed_page

pytestmark = pytest.mark.slow

PROJECT = "graphs"
TEXT = (
    "Alice Chen works with Hub Corp. Bob Ortiz works with Hub Corp. Carol Diaz works with Hub Corp. "
    "Dan Wu works with Hub Corp. Alice Chen mentors Erin Park. Alice Chen mentors Frank Li. "
    "Alice Chen mentors Gina Ross.\n"
)
TIMEOUT = 60_000


@pytest.fixture
def graph(ui_server: LiveServer) -> None:
    ingested(ui_server, PROJECT, TEXT, "people.md")


def _click_at(page, point: dict) -> None:  # noqa: ANN001
    box = page.locator("#graph-canvas").bounding_box()
    page.mouse.click(box["x"] + point["x"], box["y"] + point["y"])


def test_graph_expands_in_place_and_opens_edges_and_searches(
    ui_server: LiveServer, graph: None, browser, artifacts: Path
) -> None:  # noqa: ANN001
    from playwright.sync_api import expect

    with keyed_page(browser, f"{ui_server.url}/ui/#/graph?project={PROJECT}", TIMEOUT) as page:
        expect(page.locator("#graph-max")).to_have_value("40")  # a readable default: the top entities only
        expect(page.locator("#node-list option")).to_have_count(9)  # the placeholder and all 8 entities

        # Only the best-connected three, then a click on Alice Chen adds her neighbours around her.
        page.fill("#graph-max", "3")
        page.click("#graph-form button[type=submit]")
        expect(page.locator("#node-list option")).to_have_count(4)
        expect(page.locator("#graph-message")).to_contain_text("best-connected")
        before = page.evaluate("window.graphView.nodes()")
        assert "Alice Chen" in before and "Hub Corp" in before
        _click_at(page, before["Alice Chen"])
        expect(page.locator("#h-entity")).to_have_text("Alice Chen")
        expect(page.locator("#node-list option", has_text="Gina Ross")).to_have_count(1)
        after = page.evaluate("window.graphView.nodes()")
        moved = {name: math.dist((p["x"], p["y"]), (after[name]["x"], after[name]["y"])) for name, p in before.items()}
        assert max(moved.values()) < 0.5, f"nodes already drawn moved on expand (px): {moved}"
        assert {"Erin Park", "Frank Li", "Gina Ross"} <= set(after)
        assert page.evaluate("window.graphView.selected()") == ["Alice Chen"]

        # A click on an edge opens the relation: description, keywords, weight and its source by file name.
        edge = next(
            e
            for e in page.evaluate("window.graphView.edges()")
            if {e["source"], e["target"]} == {"Alice Chen", "Erin Park"}
        )
        _click_at(page, edge["at"])
        expect(page.locator("#h-relation")).to_be_visible()
        expect(page.locator(".relation-ends")).to_contain_text("Erin Park")
        expect(page.locator("#relation-description")).to_contain_text("mentors Erin Park")
        expect(page.locator("#relation-weight")).to_contain_text("weight")
        expect(page.locator("#relation-keywords .badge").first).to_be_visible()
        expect(page.locator("#relation-sources a")).to_have_text("people.md")
        page.screenshot(path=artifacts / "graph-relation.png", full_page=True)

        # The searched entity is selected, centred and open in the panel.
        page.fill("#entity-search", "Gina Ross")
        page.click("#graph-form button[type=submit]")
        expect(page.locator("#h-entity")).to_have_text("Gina Ross")
        assert page.evaluate("window.graphView.selected()") == ["Gina Ross"]

        # Zooming out hides the labels, zooming in shows them again; Fit brings every node back into view.
        for _ in range(6):
            page.click("#graph-zoom-out")
        expect(page.locator("#graph-canvas")).to_have_attribute("data-labels", "hidden")
        for _ in range(6):
            page.click("#graph-zoom-in")
        expect(page.locator("#graph-canvas")).to_have_attribute("data-labels", "shown")
        page.click("#graph-fit")
        expect(page.locator("#graph-fullscreen")).to_be_visible()
        page.fill("#graph-max", "40")
        page.fill("#entity-search", "")
        page.click("#graph-form button[type=submit]")
        expect(page.locator("#node-list option")).to_have_count(9)
        _click_at(page, page.evaluate("window.graphView.nodes()")["Alice Chen"])
        expect(page.locator("#entity-panel")).to_contain_text("Relations (4)")
        page.screenshot(path=artifacts / "graph-page.png", full_page=True)
