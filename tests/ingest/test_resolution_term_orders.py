"""Names whose writings differ in hyphens give one node in every ingestion order: a technical term written three
ways in three documents (hyphened, spaced, its last words as their acronym), and a hyphened place named alone
and by its designation ("Guinea-Bissau" / "Republic of Guinea-Bissau"). Each writing reads the others' keys
however the earlier writer hyphened them (app/domain/cross_document.py::nearby_ranges)."""

from __future__ import annotations

import itertools

import pytest

from tests.ingest.test_pipeline import entity_line, ingest, relation_line
from tests.ingest.test_resolution_ingest import graph, install

DOCS = ("first doc", "second doc", "third doc")
ONE_TERM = dict(
    zip(DOCS, ("high-voltage direct current", "high voltage direct current", "High-Voltage DC"), strict=True)
)


def _doc(name: str, marker: str) -> list[str]:
    grid = f"Grid Lab {marker.title()}"
    return [
        entity_line(name, "concept", f"{name} is tested in the {marker}."),
        entity_line(grid, "organization", f"{grid} runs the {marker}."),
        relation_line(grid, name, "testing", f"{grid} tests {name}."),
    ]


@pytest.mark.parametrize("order", list(itertools.permutations(DOCS)))
async def test_three_writings_of_one_term_give_one_node_in_every_order(make_settings, start_app, fake_llm, order):
    app = await start_app(make_settings())
    install(fake_llm, {marker: _doc(name, marker) for marker, name in ONE_TERM.items()})
    for marker in order:
        [doc] = await ingest(app, [marker])
        assert doc["status"] == "processed"
    keys, _ = await graph(app)
    assert len({k for k in keys if not k.startswith("grid lab ")}) == 1


PLACE = {
    "first doc": [
        entity_line("Guinea-Bissau", "location", "Guinea-Bissau lies on the Atlantic coast."),
        entity_line("Port Board", "organization", "The Port Board runs the docks."),
        relation_line("Port Board", "Guinea-Bissau", "docks", "The Port Board runs the docks of Guinea-Bissau."),
    ],
    "second doc": [
        entity_line("Republic of Guinea-Bissau", "location", "The Republic of Guinea-Bissau signed the accord."),
        entity_line("Coast Guard", "organization", "The Coast Guard patrols the shore."),
        relation_line("Coast Guard", "Republic of Guinea-Bissau", "patrols", "The Coast Guard patrols its shore."),
    ],
}


@pytest.mark.parametrize("order", list(itertools.permutations(PLACE)))
async def test_a_hyphened_place_and_its_designation_give_one_node_in_either_order(
    make_settings, start_app, fake_llm, order
):
    app = await start_app(make_settings())
    install(fake_llm, PLACE)
    for marker in order:
        [doc] = await ingest(app, [marker])
        assert doc["status"] == "processed"
    keys, _ = await graph(app)
    assert len(keys - {"port board", "coast guard"}) == 1
