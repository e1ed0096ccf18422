"""A country's short name and its designation, a place cut short and its dotted initials (app/domain/
name_designations.py) end as one node whichever document comes first; look-alikes stay two."""

from __future__ import annotations

import pytest

from tests.ingest.test_pipeline import entity_line, ingest, relation_line
from tests.ingest.test_resolution_ingest import graph, install


def _doc(name: str, marker: str) -> list[str]:
    clerk = f"Clerk {marker.title()}"
    return [
        entity_line(name, "location", f"{name} appears in the {marker}."),
        entity_line(clerk, "person", f"{clerk} files the {marker}."),
        relation_line(name, clerk, "filing", f"{clerk} wrote about {name}."),
    ]


async def _keys(app, fake_llm, first: str, second: str, order: int) -> set[str]:
    records = {"first doc": _doc(first, "first doc"), "second doc": _doc(second, "second doc")}
    install(fake_llm, records)
    for marker in ("first doc", "second doc")[::order]:
        [doc] = await ingest(app, [marker])
        assert doc["status"] == "processed"
    keys, _ = await graph(app)
    return {k for k in keys if not k.startswith("clerk ")}


@pytest.mark.parametrize("order", [1, -1], ids=["short-first", "long-first"])
@pytest.mark.parametrize(
    ("short", "long"),
    [
        ("Ruritania", "Republic of Ruritania"),
        ("Rurit.", "Ruritania"),
        ("Qt.", "Quellmart"),
        ("W.M.", "West Marches"),
        ("W.Mar.", "West Marches"),
        ("N. Qt.", "North Quellmart"),
        ("Ruritania", "Ruritanian Free Republic"),
        ("Quelmar", "Quelmarese Republic"),
        ("United Provinces", "United Provinces of Elbonia"),
        ("Quelmaron", "Quelmarese Republic"),
        ("Ruritany", "Ruritanian Republic"),
        ("Elbonkia", "Elbonk Republic"),
        ("Slovakia", "Slovak Republic"),
        ("Lebanon", "Lebanese Republic"),
        ("Ruritania", "the State of Ruritania"),
    ],
    ids=[
        "designation",
        "cut-short",
        "contracted",
        "dotted",
        "dotted-cut",
        "dotted-contracted",
        "adjective-designation",
        "demonym-designation",
        "head-before-of",
        "ese-in-place-of-on",
        "ian-in-place-of-y",
        "people-and-suffix",
        "slovak",
        "lebanese",
        "article-before-designation",
    ],
)
async def test_a_place_s_short_form_joins_it_in_either_order(make_settings, start_app, fake_llm, short, long, order):
    app = await start_app(make_settings())
    assert await _keys(app, fake_llm, short, long, order) == {long.casefold()}


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Republic of the Elbonia", "Democratic Republic of the Elbonia"),
        ("Elbonia", "Democratic Republic of Elbonia"),
        ("Freedonia", "Lower Freedonia"),
        ("Ruritania", "Ruritanian Republic"),  # the shape of "Dominica" / "Dominican Republic"
        ("Ruritania", "Ruritanian People's Republic"),
        ("United Provinces", "Democratic United Provinces of Elbonia"),
        ("W.Mar.", "East Marches"),
        ("W.Mar.", "Marches"),
    ],
)
async def test_look_alike_places_stay_two(make_settings, start_app, fake_llm, a, b):
    app = await start_app(make_settings())
    assert await _keys(app, fake_llm, a, b, 1) == {a.casefold(), b.casefold()}


@pytest.mark.parametrize("order", [1, -1], ids=["first-first", "second-first"])
@pytest.mark.parametrize(
    "names",
    [
        ("Dominica", "Dominican Republic"),
        ("Republic of the Congo", "Democratic Republic of the Congo"),
        ("Guinea", "Guinea-Bissau", "Equatorial Guinea"),
        ("Niger", "Nigeria"),
        ("Sudan", "South Sudan"),
        ("Niger", "Niger Republic", "Nigeria"),  # a people's designation beside a place of that name
    ],
    ids=["dominica", "congo", "guinea", "niger", "sudan", "niger-republic"],
)
async def test_states_sharing_a_name_s_letters_stay_apart_in_either_order(
    make_settings, start_app, fake_llm, names, order
):
    app = await start_app(make_settings())
    *firsts, last = names
    records = {
        "first doc": [line for n in firsts for line in _doc(n, "first doc")],
        "second doc": _doc(last, "second doc"),
    }
    install(fake_llm, records)
    for marker in ("first doc", "second doc")[::order]:
        [doc] = await ingest(app, [marker])
        assert doc["status"] == "processed"
    keys, _ = await graph(app)
    assert {k for k in keys if not k.startswith("clerk ")} == {n.casefold() for n in names}


@pytest.mark.parametrize("order", [1, -1], ids=["cut-first", "places-first"])
async def test_a_place_cut_short_word_by_word_that_two_places_fit_stays_apart(
    make_settings, start_app, fake_llm, order
):
    app = await start_app(make_settings())
    records = {
        "first doc": _doc("W.Mar.", "first doc"),
        "second doc": [*_doc("West Marches", "second doc"), *_doc("Wide Marches", "second doc")],
    }
    install(fake_llm, records)
    for marker in ("first doc", "second doc")[::order]:
        [doc] = await ingest(app, [marker])
        assert doc["status"] == "processed"
    keys, _ = await graph(app)
    assert {k for k in keys if not k.startswith("clerk ")} == {"w.mar.", "west marches", "wide marches"}


async def test_a_dotted_node_named_again_beside_its_place_joins_it(make_settings, start_app, fake_llm):
    app = await start_app(make_settings())
    records = {"first doc": _doc("W.M.", "first doc"), "second doc": [*_doc("West Marches", "second doc")]}
    records["second doc"].append(entity_line("W.M.", "location", "W.M. is named again in the second doc."))
    install(fake_llm, records)
    for marker in ("first doc", "second doc"):
        [doc] = await ingest(app, [marker])
        assert doc["status"] == "processed"
    keys, _ = await graph(app)
    assert {k for k in keys if not k.startswith("clerk ")} == {"west marches"}
