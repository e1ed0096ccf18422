"""Resolution independent of ingestion order (services/ingest/absorb.py): the forms the blind alias world showed
ending as other nodes in another order — a dotted acronym before its full name, an acronym used alone before a
document defines it, a product's line name alone after the short model name was absorbed into the maker's full
name — give the same nodes in every order, each retroactive merge with its ledger row; and two workers ingesting
the documents at once end the same."""

from __future__ import annotations

import asyncio
import itertools

import pytest
from sqlalchemy import select

from app.db.tables import entity_merge_ledger
from tests.ingest.test_pipeline import entity_line, ingest, relation_line, rows
from tests.ingest.test_resolution_ingest import graph, install
from tests.support.fakes.openai_server import COMPLETE, chunk_text


def _doc(name: str, etype: str, marker: str, description: str = "") -> list[str]:
    return [
        entity_line(name, etype, description or f"{name} appears in the {marker}."),
        entity_line(f"Clerk {marker.title()}", "person", f"Clerk {marker.title()} files the {marker}."),
        relation_line(name, f"Clerk {marker.title()}", "filing", f"Clerk {marker.title()} wrote about {name}."),
    ]


DOTTED = {  # no document defines it: the initials alone, written with dots
    "first doc": _doc("R.F.S.B.", "organization", "first doc"),
    "second doc": _doc("Regional Food Security Board", "organization", "second doc"),
}
DEFINED_LATER = {  # "MRI" alone, then a document writing "magnetic resonance imaging (MRI)"
    "first doc": _doc("MRI", "concept", "first doc"),
    "second doc": [
        *_doc(
            "magnetic resonance imaging",
            "concept",
            "second doc",
            "magnetic resonance imaging (MRI) shows soft tissue.",
        ),
        entity_line("MRI", "concept", "MRI is used in the second doc."),
    ],
}
PRODUCT = {  # the short model name, the full name with the line alone, the line alone
    "first doc": _doc("Terralink X7", "artifact", "first doc"),
    "second doc": [
        *_doc("Pellucid Terralink X7", "artifact", "second doc"),
        entity_line("Terralink", "artifact", "Terralink ships in the second doc."),
    ],
    "third doc": _doc("Terralink", "artifact", "third doc"),
}
CLERKS = {"clerk first doc", "clerk second doc", "clerk third doc"}


async def _ingest_in(app, fake_llm, records: dict[str, list[str]], order: tuple[str, ...]) -> set[str]:
    install(fake_llm, records)
    for marker in order:
        [doc] = await ingest(app, [marker])
        assert doc["status"] == "processed"
    keys, _ = await graph(app)
    return keys - CLERKS


async def _ledger(app) -> list[tuple[str, str, bool]]:
    found = await rows(app, select(entity_merge_ledger))
    return sorted((r["entity_key"], r["merged_name"], r["retroactive"]) for r in found)


@pytest.mark.parametrize("order", [("first doc", "second doc"), ("second doc", "first doc")], ids=["short", "full"])
async def test_a_dotted_acronym_joins_its_full_name_in_either_order(make_settings, start_app, fake_llm, order):
    app = await start_app(make_settings())
    assert await _ingest_in(app, fake_llm, DOTTED, order) == {"regional food security board"}
    [(target, merged, retroactive)] = await _ledger(app)
    assert (target, merged, retroactive) == ("regional food security board", "R.F.S.B.", order[0] == "first doc")


@pytest.mark.parametrize("order", [("first doc", "second doc"), ("second doc", "first doc")], ids=["alone", "defined"])
async def test_an_acronym_used_before_its_definition_joins_it(make_settings, start_app, fake_llm, order):
    app = await start_app(make_settings())
    assert await _ingest_in(app, fake_llm, DEFINED_LATER, order) == {"magnetic resonance imaging"}
    ledger = await _ledger(app)
    assert ("magnetic resonance imaging", "MRI") in {(t, m) for t, m, _ in ledger}
    if order[0] == "first doc":  # the earlier node was absorbed when the definition arrived
        assert ("magnetic resonance imaging", "MRI", True) in ledger


@pytest.mark.parametrize("order", list(itertools.permutations(["first doc", "second doc", "third doc"])))
async def test_a_product_line_alone_joins_the_full_name_in_every_order(make_settings, start_app, fake_llm, order):
    app = await start_app(make_settings())
    assert await _ingest_in(app, fake_llm, PRODUCT, order) == {"pellucid terralink x7"}
    merged = {m for t, m, _ in await _ledger(app) if t == "pellucid terralink x7"}
    assert "Terralink X7" in merged


def _held(fake_llm, records: dict[str, list[str]], together: int) -> None:
    """Extractions answer only once `together` of them were asked for, so those documents each resolve before
    any of them commits."""
    arrived = {"count": 0, "all": asyncio.Event()}

    async def extract(messages) -> str:
        arrived["count"] += 1
        if arrived["count"] >= together:
            arrived["all"].set()
        await asyncio.wait_for(arrived["all"].wait(), 30)
        text = chunk_text(messages)
        return "\n".join(next(v for k, v in records.items() if k in text) + [COMPLETE])

    fake_llm.handlers["extract"] = extract


async def test_two_workers_ingesting_at_once_end_with_the_same_nodes(make_settings, start_app, fake_llm):
    """The final pass of the document committing last joins the acronym to its definition."""
    app = await start_app(make_settings(max_parallel_insert=4, max_gleaning=0))
    _held(fake_llm, DEFINED_LATER, 2)
    results = await asyncio.gather(ingest(app, ["first doc"]), ingest(app, ["second doc"]))
    assert all(r[0]["status"] == "processed" for r in results)
    keys, _ = await graph(app)
    assert keys - CLERKS == {"magnetic resonance imaging"}


async def test_a_surname_alone_and_a_second_bearer_ingested_at_once_stay_apart(make_settings, start_app, fake_llm):
    """ "Dr. Okafor" resolves while only Ngozi Okafor is committed, at the same time as Chidi Okafor's document:
    whichever commits last detaches it."""
    app = await start_app(make_settings(max_parallel_insert=4, max_gleaning=0))
    install(fake_llm, SURNAMES)
    await ingest(app, ["first doc"])
    _held(fake_llm, SURNAMES, 2)
    results = await asyncio.gather(ingest(app, ["second doc"]), ingest(app, ["third doc"]))
    assert all(r[0]["status"] == "processed" for r in results)
    keys, _ = await graph(app)
    assert keys - CLERKS == {"ngozi okafor", "chidi okafor", "dr. okafor"}


EVENT = {  # an event without its year, then written with the year first and last ("Lodève": keys keep accents)
    "first doc": _doc("Lodève Conference", "event", "first doc"),
    "second doc": _doc("1996 Lodève Conference", "event", "second doc"),
    "third doc": _doc("Lodève Conference 1996", "event", "third doc"),
}


@pytest.mark.parametrize("order", [("first doc", "second doc", "third doc"), ("third doc", "first doc", "second doc")])
async def test_an_event_without_its_year_joins_it_in_either_order(make_settings, start_app, fake_llm, order):
    app = await start_app(make_settings())
    keys = await _ingest_in(app, fake_llm, EVENT, order)
    assert len(keys) == 1 and next(iter(keys)).startswith(("1996 lodève", "lodève conference 1996")), keys


SURNAMES = {  # "Dr. Okafor" alone, and two people of that surname in other documents
    "first doc": _doc("Ngozi Okafor", "person", "first doc"),
    "second doc": _doc("Dr. Okafor", "person", "second doc"),
    "third doc": _doc("Chidi Okafor", "person", "third doc"),
}


@pytest.mark.parametrize("order", list(itertools.permutations(["first doc", "second doc", "third doc"])))
async def test_a_surname_alone_stays_apart_once_two_people_bear_it(make_settings, start_app, fake_llm, order):
    app = await start_app(make_settings())
    """Joined while one Okafor was known, "Dr. Okafor" is detached again (unmerge, ledger entry undone) when the
    second arrives: the nodes are those of the orders where both were known first."""
    assert await _ingest_in(app, fake_llm, SURNAMES, order) == {"ngozi okafor", "chidi okafor", "dr. okafor"}
    _, pairs = await graph(app)
    assert {p for p in pairs if "dr. okafor" in p} == {("clerk second doc", "dr. okafor")}
    assert {p for p in pairs if "ngozi okafor" in p} == {("clerk first doc", "ngozi okafor")}
    found = [r for r in await rows(app, select(entity_merge_ledger)) if r["merged_name"] == "Dr. Okafor"]
    if order[-1] == "second doc":  # both were known when it came: never joined
        assert found == []
    else:
        assert [r["outcome"] for r in found] == ["undone"]
