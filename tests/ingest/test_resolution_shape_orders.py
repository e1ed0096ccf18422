"""Writings of one name that differ in case and hyphens, or in a term's type, give one node in every ingestion
order: a firm written in capitals first ("TELENOVA") and hyphened later ("Tele-Nova"), and a technical term
typed as a technology (a type the project lists) written three ways (hyphened, spaced, its last words as their
acronym)."""

from __future__ import annotations

import itertools

import pytest

from app.core.config import DEFAULT_ENTITY_TYPES
from tests.ingest.test_pipeline import entity_line, ingest, relation_line
from tests.ingest.test_resolution_ingest import graph, install

DOCS = ("first doc", "second doc", "third doc")


def _doc(name: str, etype: str, marker: str) -> list[str]:
    lab = f"Grid Lab {marker.title()}"
    return [
        entity_line(name, etype, f"{name} is tested in the {marker}."),
        entity_line(lab, "organization", f"{lab} runs the {marker}."),
        relation_line(lab, name, "testing", f"{lab} tests {name}."),
    ]


async def _nodes(app, fake_llm, names: dict[str, str], etype: str, order) -> set[str]:
    install(fake_llm, {marker: _doc(name, etype, marker) for marker, name in names.items()})
    for marker in order:
        [doc] = await ingest(app, [marker])
        assert doc["status"] == "processed"
    keys, _ = await graph(app)
    return {k for k in keys if not k.startswith("grid lab ")}


TERM = dict(zip(DOCS, ("high-voltage direct current", "high voltage direct current", "High-Voltage DC"), strict=True))
TYPES = [*DEFAULT_ENTITY_TYPES, "Technology"]


@pytest.mark.parametrize("order", list(itertools.permutations(DOCS)), ids=lambda o: " > ".join(o))
async def test_a_term_of_a_configured_product_type_written_three_ways_gives_one_node_in_every_order(
    make_settings, start_app, fake_llm, order
):
    """ "technology" is a product type of the rules but not one of the default entity types: the extraction
    reads it as "other", which says nothing of what the thing is, and the spelling rules join things of one
    specific type only. Configured, it is a type like "concept"."""
    app = await start_app(make_settings(entity_types=TYPES))
    nodes = await _nodes(app, fake_llm, TERM, "technology", order)
    assert len(nodes) == 1, nodes


FIRM = dict(zip(DOCS, ("TELENOVA", "Tele-Nova", "TeleNova"), strict=True))


@pytest.mark.parametrize("order", list(itertools.permutations(DOCS)), ids=lambda o: " > ".join(o))
async def test_a_firm_in_capitals_and_hyphened_gives_one_node_in_every_order(make_settings, start_app, fake_llm, order):
    app = await start_app(make_settings())
    assert len(await _nodes(app, fake_llm, FIRM, "organization", order)) == 1
