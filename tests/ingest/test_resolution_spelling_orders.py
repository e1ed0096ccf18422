"""A person's name spelt three ways in three documents gives one node in every ingestion order, and three census
given names of one sound stay three people in every order (app/domain/name_sounds.py): "spelt otherwise" is an
equivalence, so no spelling can bridge two others that are not one name, whichever arrived first."""

from __future__ import annotations

import itertools

import pytest

from tests.ingest.test_pipeline import entity_line, ingest, relation_line
from tests.ingest.test_resolution_ingest import graph, install

DOCS = ("first doc", "second doc", "third doc")


def quoted_person_doc(name: str, marker: str) -> list[str]:
    """A document quoting the person `name`, interviewed by a clerk named after the document."""
    clerk = f"Clerk {marker.title()}"
    return [
        entity_line(name, "person", f"{name} is quoted in the {marker}."),
        entity_line(clerk, "person", f"{clerk} files the {marker}."),
        relation_line(name, clerk, "interview", f"{clerk} interviewed {name}."),
    ]


# pairwise, "Arkadiy" / "Arkady" is one written vowel apart while each is close to "Arkadi": no longer a bridge
ONE_PERSON = dict(zip(DOCS, ("Arkadiy Zhukovskiy", "Arkady Zhukovsky", "Arkadi Zhukovski"), strict=True))
THREE_PEOPLE = dict(zip(DOCS, ("Karen Ashcombe", "Karin Ashcombe", "Karyn Ashcombe"), strict=True))


async def _people(app, fake_llm, names: dict[str, str], order: tuple[str, ...]) -> set[str]:
    install(fake_llm, {marker: quoted_person_doc(name, marker) for marker, name in names.items()})
    for marker in order:
        [doc] = await ingest(app, [marker])
        assert doc["status"] == "processed"
    keys, _ = await graph(app)
    return {k for k in keys if not k.startswith("clerk ")}


@pytest.mark.parametrize("order", list(itertools.permutations(DOCS)))
async def test_three_spellings_of_one_name_give_one_node_in_every_order(make_settings, start_app, fake_llm, order):
    app = await start_app(make_settings())
    nodes = await _people(app, fake_llm, ONE_PERSON, order)
    assert nodes == {ONE_PERSON[order[0]].casefold()}  # the first spelling read names the node


@pytest.mark.parametrize("order", list(itertools.permutations(DOCS)))
async def test_census_given_names_of_one_sound_stay_apart_in_every_order(make_settings, start_app, fake_llm, order):
    app = await start_app(make_settings())
    nodes = await _people(app, fake_llm, THREE_PEOPLE, order)
    assert nodes == {name.casefold() for name in THREE_PEOPLE.values()}
