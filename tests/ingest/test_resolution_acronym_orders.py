"""An acronym two documents define two ways ("Fiscal Reform Commission (FRC)", "Federal Rail Corporation (FRC)")
and a third uses undefined: whichever order the three come in, the graph should end the same, the undefined use
apart from both (it may be either). The undefined use first follows the first definition ingested (a recorded
alias, or an absorption while that definition is the project's only one); the second definition undoes that
merge, giving back the undefined use's chunks only, and the definitions stay scoped to their documents.
Coming after both, the use follows neither (issue 33)."""

from __future__ import annotations

from itertools import permutations

import pytest

from tests.ingest.test_pipeline import entity_line, ingest, relation_line
from tests.ingest.test_resolution_ingest import graph, install

DOCS = {
    "doc alpha": ("Fiscal Reform Commission", "The Fiscal Reform Commission (FRC) met; FRC staff spoke."),
    "doc beta": ("Federal Rail Corporation", "The Federal Rail Corporation (FRC) met; FRC staff spoke."),
    "doc gamma": (None, "FRC staff spoke again."),
}


def _records(marker: str) -> list[str]:
    name, text = DOCS[marker]
    clerk = f"Clerk {marker.split()[1].title()}"
    lines = [entity_line("FRC", "organization", text), entity_line(clerk, "person", f"{clerk} files the {marker}.")]
    if name:
        lines.append(entity_line(name, "organization", text))
    return [*lines, relation_line("FRC", clerk, "filing", f"{clerk} wrote about FRC.")]


async def _graph(app, fake_llm, order: tuple[str, ...]) -> tuple[set[str], set[tuple[str, str]]]:
    install(fake_llm, {marker: _records(marker) for marker in DOCS})
    for marker in order:
        [doc] = await ingest(app, [f"{marker}: {DOCS[marker][1]}"])
        assert doc["status"] == "processed"
    return await graph(app)


@pytest.mark.parametrize("order", list(permutations(DOCS)), ids=lambda o: "-".join(m.split()[1] for m in o))
async def test_an_acronym_defined_two_ways_ends_the_same_in_every_order(make_settings, start_app, fake_llm, order):
    app = await start_app(make_settings())
    keys, pairs = await _graph(app, fake_llm, order)
    assert {tuple(sorted(p)) for p in pairs} == {
        ("clerk alpha", "fiscal reform commission"),
        ("clerk beta", "federal rail corporation"),
        ("clerk gamma", "frc"),
    }
