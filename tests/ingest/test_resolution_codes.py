"""A code written in parentheses after a name it does not spell ("Veldorian Crown (QRX)") joins that name across
documents in either order, for things of one type (app/domain/name_codes.py); after a place it names another
place ("Lyon (FRA)"), and stays apart. After a name of one word ("Gold (XAU)") the code joins it only when the
word is no other name's word in the document and the types are one specific type that is not a place's or a
person's. Invented names: none is in the holdout or blind worlds."""

from __future__ import annotations

import pytest

from tests.ingest.test_pipeline import entity_line, ingest, relation_line
from tests.ingest.test_resolution_ingest import graph, install


def _records(name: str, code: str, etype: str, marker: str, defined: bool, also: str = "") -> list[str]:
    clerk = f"Clerk {marker.title()}"
    said = f"{name} ({code}) is quoted daily in the {marker}." if defined else f"{code} appears in the {marker}."
    lines = [entity_line(code, etype, said), entity_line(clerk, "person", f"{clerk} files the {marker}.")]
    if defined:
        lines.append(entity_line(name, etype, said))
    if defined and also:
        lines.append(entity_line(also, etype, f"{also} is quoted weekly."))
    return [*lines, relation_line(code, clerk, "filing", f"{clerk} wrote about {code}.")]


async def _keys(app, fake_llm, name: str, code: str, etype: str, order: int, also: str = "") -> set[str]:
    records = {
        "first doc": _records(name, code, etype, "first doc", defined=True, also=also),
        "second doc": _records(name, code, etype, "second doc", defined=False),
    }
    install(fake_llm, records)
    for marker in ("first doc", "second doc")[::order]:
        [doc] = await ingest(app, [f"{marker}: {name} ({code}) and {code}." if marker == "first doc" else marker])
        assert doc["status"] == "processed"
    keys, _ = await graph(app)
    return {k for k in keys if not k.startswith("clerk ")}


@pytest.mark.parametrize("order", [1, -1], ids=["defined-first", "code-first"])
async def test_a_code_after_a_name_joins_it_in_either_order(make_settings, start_app, fake_llm, order):
    app = await start_app(make_settings())
    assert await _keys(app, fake_llm, "Veldorian Crown", "QRX", "concept", order) == {"veldorian crown"}


async def test_a_code_after_a_place_stays_apart(make_settings, start_app, fake_llm):
    app = await start_app(make_settings())
    assert await _keys(app, fake_llm, "Port Lunden", "FRX", "location", 1) == {"port lunden", "frx"}


@pytest.mark.parametrize("order", [1, -1], ids=["defined-first", "code-first"])
async def test_a_code_after_a_name_of_one_word_joins_it_in_either_order(make_settings, start_app, fake_llm, order):
    app = await start_app(make_settings())
    assert await _keys(app, fake_llm, "Zorvalium", "QZV", "concept", order) == {"zorvalium"}


@pytest.mark.parametrize(
    ("name", "etype", "also"),
    [("Lunden", "location", ""), ("Halvard", "person", ""), ("Crown", "concept", "Veldorian Crown")],
    ids=["place", "person", "word-of-another-name"],
)
async def test_a_code_after_a_name_of_one_word_stays_apart_when_unsure(
    make_settings, start_app, fake_llm, name, etype, also
):
    app = await start_app(make_settings())
    keys = await _keys(app, fake_llm, name, "QZV", etype, 1, also)
    assert {name.lower(), "qzv"} <= keys
