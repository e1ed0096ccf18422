"""Initials two names fit ("N.C." for the places "North Carolina" and "New Caledonia", "QRC" for two bodies), the
names in different documents: whichever document comes first, the acronym ends alone, and neither name's node
holds it or its description (it joined the only name it fitted; the second name undoes that, issue 33). And
initials an entity of another type fits as well: they join the one name of their type, in every order."""

from __future__ import annotations

import itertools

import pytest
from sqlalchemy import select

from app.db.tables import entities
from tests.ingest.test_pipeline import entity_line, ingest, relation_line, rows
from tests.ingest.test_resolution_ingest import install

_MARKERS = ("third doc", "fifth doc", "ninth doc", "tenth doc")


def _doc(name: str, etype: str, marker: str) -> list[str]:
    clerk = f"Clerk {marker.title()}"
    return [
        entity_line(name, etype, f"{name} appears in the {marker}."),
        entity_line(clerk, "person", f"{clerk} files the {marker}."),
        relation_line(name, clerk, "filing", f"{clerk} wrote about {name}."),
    ]


@pytest.mark.parametrize("order", [1, -1], ids=["other-name-first", "own-name-first"])
@pytest.mark.parametrize(
    ("etype", "names"),
    [
        ("location", ("New Quorvia", "New Quorvia", "N.Q.", "North Quellmart")),
        ("organization", ("Quorvian Rail Company", "Quorvian Rail Company", "QRC", "Quellmart Reform Council")),
    ],
    ids=["dotted-place", "acronym-body"],
)
async def test_initials_two_names_fit_join_neither(make_settings, start_app, fake_llm, etype, names, order):
    app = await start_app(make_settings())
    records = {marker: _doc(name, etype, marker) for marker, name in zip(_MARKERS, names, strict=True)}
    install(fake_llm, records)
    for marker in _MARKERS[::order]:
        [doc] = await ingest(app, [marker])
        assert doc["status"] == "processed"
    found = await rows(app, select(entities.c.key, entities.c.description))
    nodes = {r["key"]: r["description"] for r in found if not r["key"].startswith("clerk ")}
    assert set(nodes) == {n.casefold() for n in names}
    short = names[2].casefold()
    assert "ninth doc" in nodes[short]
    assert all("ninth doc" not in d for k, d in nodes.items() if k != short)


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))), ids=lambda o: "-".join(map(str, o)))
async def test_initials_of_an_entity_of_another_type_leave_the_fit_alone(make_settings, start_app, fake_llm, order):
    """ "Q.V." (a place) fits the place "Quellmart Valley" and not the concept "Quorvian Vellum", whatever the
    order: the retroactive pass weighs only entities of a fitting type, as the merge at ingest does (it once took
    the concept for a second fit, so the acronym stayed apart when it came before the place's name)."""
    app = await start_app(make_settings())
    docs = [("Quorvian Vellum", "concept"), ("Q.V.", "location"), ("Quellmart Valley", "location")]
    records = {marker: _doc(name, etype, marker) for marker, (name, etype) in zip(_MARKERS, docs, strict=False)}
    install(fake_llm, records)
    for i in order:
        [doc] = await ingest(app, [_MARKERS[i]])
        assert doc["status"] == "processed"
    found = await rows(app, select(entities.c.key, entities.c.description))
    nodes = {r["key"]: r["description"] for r in found if not r["key"].startswith("clerk ")}
    assert set(nodes) == {"quorvian vellum", "quellmart valley"}
    assert "fifth doc" in nodes["quellmart valley"] and "fifth doc" not in nodes["quorvian vellum"]
