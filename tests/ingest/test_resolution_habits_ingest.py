"""Writers' habits resolved through the real pipeline, each in both orders: a curly possessive, family name first,
a diminutive, a Roman numeral, River before the name, a compound joined or split, a plural head word, an event
without its year, a product without its maker, partners' names without their firm's trade. The short form
ingested first is absorbed when the long one comes (a ledger row either way)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.db.tables import entities, entity_merge_ledger
from app.domain.names import normalize_name
from tests.ingest.test_pipeline import ingest, rows
from tests.ingest.test_resolution_across import _records
from tests.ingest.test_resolution_ingest import graph, install

HABITS = {
    "possessive": ("Meilin Zhou", "Meilin Zhou\u2019s", "person"),
    "name order": ("Meilin Zhou", "ZHOU Meilin", "person"),
    "diminutive": ("Robert Whitfield", "Bob Whitfield", "person"),
    "numeral": ("Fourth Basin Plan", "Basin Plan IV", "concept"),
    "river": ("Nakuru River", "River Nakuru", "location"),
    "compound": ("Solar Edge", "SolarEdge", "organization"),
    "plural": ("Ardent Breweries", "Ardent Brewery", "organization"),
    "year": ("2004 Guilin Conference", "Guilin Conference", "event"),
    "maker": ("Pellucid Terralink X7", "Terralink X7", "artifact"),
    "firm": ("Lund & Baird Engineering", "Lund & Baird", "organization"),
}
LONG_WINS = {"year", "maker", "firm"}  # the name with more to it holds the node whichever comes first


@pytest.mark.parametrize("habit", sorted(HABITS))
@pytest.mark.parametrize("reverse", [False, True], ids=["full first", "short first"])
async def test_each_habit_ends_as_one_node_in_either_order(make_settings, start_app, fake_llm, habit, reverse):
    full, short, etype = HABITS[habit]
    app = await start_app(make_settings())
    install(fake_llm, _records(full, short, etype))
    for marker in ["second doc", "first doc"] if reverse else ["first doc", "second doc"]:
        await ingest(app, [marker])
    keys, _ = await graph(app)
    first, later = (short, full) if reverse and habit not in LONG_WINS else (full, short)
    node = normalize_name(first).lower()
    assert keys == {node, "marta quell", "harbour office"}, habit
    [row] = await rows(app, select(entities.c.description).where(entities.c.key == node))
    assert "first report" in row["description"] and "second report" in row["description"]
    ledger = await rows(app, select(entity_merge_ledger))
    assert [(r["entity_key"], r["merged_name"]) for r in ledger] == [(node, normalize_name(later))]


LOOK_ALIKES = {
    "two years": ("2001 Guilin Conference", "Guilin Conference 2005", "event"),
    "another head": ("Ardent Breweries Group", "Ardent Brewery", "organization"),
    "two first names": ("Naseem Khan", "Imran Khan", "person"),
    "another diminutive": ("Robert Whitfield", "Bill Whitfield", "person"),
    "another numeral": ("Fourth Basin Plan", "Basin Plan V", "concept"),
}


@pytest.mark.parametrize("kind", sorted(LOOK_ALIKES))
async def test_look_alikes_stay_two_nodes(make_settings, start_app, fake_llm, kind):
    one, two, etype = LOOK_ALIKES[kind]
    app = await start_app(make_settings())
    install(fake_llm, _records(one, two, etype))
    await ingest(app, ["second doc"])
    await ingest(app, ["first doc"])
    keys, _ = await graph(app)
    assert {one.lower(), two.lower()} <= keys, kind
    assert await rows(app, select(entity_merge_ledger)) == []


async def test_a_short_node_reached_by_a_later_document_is_absorbed_into_its_longer_name(
    make_settings, start_app, fake_llm
):
    """ "Terralink" alone, then "Terralink X7" (which absorbs it), then a document naming "Pellucid Terralink X7"
    and "Terralink": one node, whatever the order the first two came in."""
    from tests.ingest.test_pipeline import entity_line

    lines = {
        "doc a": [entity_line("Terralink", "artifact", "Terralink is sold in shops.")],
        "doc b": [entity_line("Terralink X7", "artifact", "Terralink X7 is a router.")],
        "doc c": [
            entity_line("Pellucid Terralink X7", "artifact", "Pellucid Terralink X7 is made by Pellucid."),
            entity_line("Terralink", "artifact", "Terralink is popular."),
        ],
    }
    app = await start_app(make_settings())
    install(fake_llm, lines)
    for marker in ["doc a", "doc b", "doc c"]:
        await ingest(app, [marker])
    keys, _ = await graph(app)
    assert keys == {"pellucid terralink x7"}
