"""A code written in parentheses after a name it does not spell ("Veldorian Crown (QRX)") joins that name across
documents in either order, for things of one type (app/domain/name_codes.py); after a place it names another
place ("Lyon (FRA)"), and stays apart. Invented names: none is in the holdout or blind worlds."""

from __future__ import annotations

import pytest

from tests.ingest.test_pipeline import entity_line, ingest, relation_line
from tests.ingest.test_resolution_ingest import graph, install


def _records(name: str, code: str, etype: str, marker: str, defined: bool) -> list[str]:
    clerk = f"Clerk {marker.title()}"
    said = f"{name} ({code}) is quoted daily in the {marker}." if defined else f"{code} appears in the {marker}."
    lines = [entity_line(code, etype, said), entity_line(clerk, "person", f"{clerk} files the {marker}.")]
    if defined:
        lines.append(entity_line(name, etype, said))
    return [*lines, relation_line(code, clerk, "filing", f"{clerk} wrote about {code}.")]


async def _keys(app, fake_llm, name: str, code: str, etype: str, order: int) -> set[str]:
    records = {
        "first doc": _records(name, code, etype, "first doc", defined=True),
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
