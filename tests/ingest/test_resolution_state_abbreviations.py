"""A US state's abbreviation joins its state or nothing, in every ingestion order (app/domain/state_abbreviations.py).
Found on fresh holdout seeds: "Mo." (Missouri's) beside "Mexico" in one document joined Mexico by its first and
last letters, and "R.I." (Rhode Island's) beside "Republic of India" joined the country by its initials when that
document came first, so the nodes depended on the order."""

from __future__ import annotations

import itertools

import pytest
from sqlalchemy import select

from app.db.tables import entities
from tests.ingest.test_pipeline import entity_line, ingest, relation_line, rows
from tests.ingest.test_resolution_ingest import install

_MARKERS = ("first brief", "second brief", "third brief")


def _doc(names: tuple[str, ...], marker: str) -> list[str]:
    desk = f"Desk {marker.title()}"
    lines = [entity_line(desk, "organization", f"{desk} writes the {marker}.")]
    for name in names:
        lines += [
            entity_line(name, "location", f"{name} is named in the {marker}."),
            relation_line(desk, name, "reporting", f"{desk} reports on {name}."),
        ]
    return lines


async def _nodes(app, fake_llm, docs: tuple[tuple[str, ...], ...], order) -> dict[str, str]:
    install(fake_llm, {marker: _doc(names, marker) for marker, names in zip(_MARKERS, docs, strict=False)})
    for i in order:
        [doc] = await ingest(app, [_MARKERS[i]])
        assert doc["status"] == "processed"
    found = await rows(app, select(entities.c.key, entities.c.description))
    return {r["key"]: r["description"] for r in found if not r["key"].startswith("desk ")}


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))), ids=lambda o: "-".join(map(str, o)))
async def test_missouris_abbreviation_never_joins_the_place_its_letters_fit(make_settings, start_app, fake_llm, order):
    app = await start_app(make_settings())
    docs = (("Mexico", "Mo."), ("Missouri", "Mo."), ("Mexico",))
    nodes = await _nodes(app, fake_llm, docs, order)
    # no rule reads "Mo." as Missouri (its letters are not the name's first and last): it stays a node of its own
    assert set(nodes) == {"mexico", "missouri", "mo."}, set(nodes)
    assert "Mo. is named" not in nodes["mexico"]


@pytest.mark.parametrize("order", list(itertools.permutations(range(2))), ids=lambda o: "-".join(map(str, o)))
async def test_rhode_islands_initials_join_it_and_not_a_country_with_the_same_initials(
    make_settings, start_app, fake_llm, order
):
    app = await start_app(make_settings())
    docs = (("Rhode Island", "R.I."), ("Republic of India", "India", "R.I."))
    nodes = await _nodes(app, fake_llm, docs, order)
    assert set(nodes) == {"rhode island", "republic of india"}, set(nodes)
    assert "R.I. is named in the first brief" in nodes["rhode island"]
    assert "R.I. is named in the second brief" in nodes["rhode island"]
    assert "R.I." not in nodes["republic of india"]


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))), ids=lambda o: "-".join(map(str, o)))
async def test_initials_alone_join_the_state_whether_or_not_a_country_of_those_initials_came(
    make_settings, start_app, fake_llm, order
):
    """ "R.I." alone joins the one place whose initials it is; a later "Republic of India" is no second fit that
    would undo the merge (as "North Carolina" undoes "N.C." joined to "New Caledonia"), so every order agrees."""
    app = await start_app(make_settings())
    docs = (("Rhode Island",), ("R.I.",), ("Republic of India",))
    nodes = await _nodes(app, fake_llm, docs, order)
    assert set(nodes) == {"rhode island", "republic of india"}, set(nodes)
    assert "R.I. is named in the second brief" in nodes["rhode island"]
