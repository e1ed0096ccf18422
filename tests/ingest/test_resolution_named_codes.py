"""A code the document defines right after one of its names joins that name across documents in either order,
whatever letters it takes (app/domain/name_codes.py::code_definitions): a term in lower case whose code is not
its initials ("quorvane iron salt (QFS)"), a name whose code spells only its last words ("New Tarvosian Dram
(TDR)"), a place with a joining word inside ("Velmora and Tobrin (VTO)") and a short word spelling its code
("Tarvos (TRV)"). A code after a person names
another entity and stays apart. Invented names: none is in the holdout or blind worlds."""

from __future__ import annotations

import pytest

from tests.ingest.test_pipeline import entity_line, ingest, relation_line
from tests.ingest.test_resolution_ingest import graph, install


def _records(name: str, code: str, etype: str, code_type: str, marker: str, defined: bool) -> list[str]:
    clerk = f"Clerk {marker.title()}"
    said = f"Reports on {name} ({code}) in the {marker}." if defined else f"{code} appears in the {marker}."
    lines = [entity_line(code, code_type, said), entity_line(clerk, "person", f"{clerk} files the {marker}.")]
    if defined:
        lines.append(entity_line(name, etype, said))
    return [*lines, relation_line(code, clerk, "filing", f"{clerk} wrote about {code}.")]


async def _keys(app, fake_llm, name: str, code: str, etype: str, order: int, code_type: str = "") -> set[str]:
    records = {
        "first doc": _records(name, code, etype, code_type or etype, "first doc", defined=True),
        "second doc": _records(name, code, etype, code_type or etype, "second doc", defined=False),
    }
    install(fake_llm, records)
    for marker in ("first doc", "second doc")[::order]:
        text = f"{marker}: the figures on {name} ({code}) and {code}." if marker == "first doc" else marker
        [doc] = await ingest(app, [text])
        assert doc["status"] == "processed"
    keys, _ = await graph(app)
    return {k for k in keys if not k.startswith("clerk ")}


@pytest.mark.parametrize("order", [1, -1], ids=["defined-first", "code-first"])
@pytest.mark.parametrize(
    ("name", "code", "etype"),
    [
        ("quorvane iron salt", "QFS", "concept"),  # lower case, the letters not its initials
        ("New Tarvosian Dram", "TDR", "concept"),  # the letters spell "Tarvosian Dram" only
        ("Velmora and Tobrin", "VTO", "location"),  # a joining word inside a place's name
        ("Tarvos", "TRV", "location"),  # one short word spelling its code
    ],
    ids=["lower-case-term", "tail-spelled", "joining-word", "one-word"],
)
async def test_a_code_defined_after_a_name_joins_it_in_either_order(
    make_settings, start_app, fake_llm, order, name, code, etype
):
    app = await start_app(make_settings())
    assert await _keys(app, fake_llm, name, code, etype, order) == {name.lower()}


@pytest.mark.parametrize("order", [1, -1], ids=["defined-first", "code-first"])
async def test_a_code_after_a_person_stays_apart(make_settings, start_app, fake_llm, order):
    app = await start_app(make_settings())
    keys = await _keys(app, fake_llm, "halvard brennick", "QZV", "person", order, code_type="organization")
    assert keys == {"halvard brennick", "qzv"}
