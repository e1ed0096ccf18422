"""The judge's candidates beyond the rules (ENTITY_RESOLUTION=llm) through the real pipeline, the model and the
embeddings faked at the HTTP edge (hashed bag of words: texts sharing words are near): a renamed place no rule
relates reaches the judge by its embedding neighbours and joins on "same"; a pair the confusable guard keeps
apart is never shown and never joined, nor are two people sharing no surname; messy answers are read or
ignored; the pairs per document are capped; the call is counted in the document's figures; a failing embedding
call leaves the rules' pairs."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from app.db.tables import entity_aliases, entity_merge_ledger
from app.domain.judge_candidates import PER_DOCUMENT
from tests.ingest.test_pipeline import entity_line, ingest, relation_line, rows
from tests.ingest.test_resolution_ingest import graph, install
from tests.ingest.test_resolution_judge import answer_same_for, judge_pairs

RENAMED = {
    "first doc": [
        entity_line("Madras", "location", "Madras is a port city on the Coromandel Coast of India."),
        entity_line("Harbour Trust", "organization", "The Harbour Trust runs the docks of Madras."),
        relation_line("Harbour Trust", "Madras", "docks", "The Harbour Trust runs the docks of Madras."),
    ],
    "second doc": [
        entity_line("Chennai", "location", "Chennai is a port city on the Coromandel Coast of India."),
        entity_line("Leela Menon", "person", "Leela Menon audits shipping lines for a living."),
        relation_line("Leela Menon", "Chennai", "audits", "Leela Menon audits the port of Chennai."),
    ],
}


def always_same(messages) -> str:
    return json.dumps(
        {"verdicts": [{"pair": p["pair"], "same": True, "reason": "same"} for p in judge_pairs(messages)]}
    )


def shown_pairs(fake_llm) -> set[tuple[str, str]]:
    return {(p["a"]["name"], p["b"]["name"]) for c in fake_llm.calls_of("judge") for p in judge_pairs(c.messages)}


async def test_a_rename_no_rule_relates_reaches_the_judge_and_joins(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(entity_resolution="llm"))
    install(fake_llm, RENAMED)
    fake_llm.handlers["judge"] = answer_same_for("Madras")
    await ingest(app, ["first doc"])
    calls_before = list(fake_llm.calls)
    [doc] = await ingest(app, ["second doc"])
    [call] = fake_llm.calls_of("judge")
    assert ("Chennai", "Madras") in shown_pairs(fake_llm)
    assert all(p["a"]["type"] == p["b"]["type"] for p in judge_pairs(call.messages))  # types compatible
    keys, pairs = await graph(app)
    assert keys == {"madras", "harbour trust", "leela menon"}
    assert ("leela menon", "madras") in pairs
    [row] = await rows(app, select(entity_merge_ledger))
    assert (row["entity_key"], row["merged_name"], row["rule"]) == ("madras", "Chennai", "llm_judge")
    assert row["document_id"] == doc["id"]
    [alias] = await rows(app, select(entity_aliases).where(entity_aliases.c.alias_key.like("chennai%")))
    assert alias["alias_key"] == f"chennai\x1f{doc['id']}"  # this document's reading only
    got = (await app.http.get(f"/documents/{doc['id']}")).json()
    new_calls = fake_llm.calls[len(calls_before) :]
    assert got["llm_calls"] == len(new_calls)  # the judge's call counted with the extraction's
    assert got["llm_prompt_tokens"] == sum(c.prompt_tokens for c in new_calls)
    assert got["llm_completion_tokens"] == sum(c.completion_tokens for c in new_calls)


async def test_auto_mode_asks_no_judge_and_keeps_the_rename_apart(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(entity_resolution="auto"))
    install(fake_llm, RENAMED)
    fake_llm.handlers["judge"] = always_same
    await ingest(app, ["first doc"])
    await ingest(app, ["second doc"])
    assert fake_llm.calls_of("judge") == []
    keys, _ = await graph(app)
    assert {"madras", "chennai"} <= keys


CONFUSABLE = {
    "first doc": [
        entity_line("Naseem Khan", "person", "Naseem Khan chairs the port board of Karachi."),
        entity_line("Acme Holdings", "organization", "Acme Holdings owns the port of Karachi."),
    ],
    "second doc": [
        entity_line("Imran Khan", "person", "Imran Khan chairs the port board of Karachi."),
        entity_line("Acme Holding Group", "organization", "Acme Holding Group owns the port of Karachi."),
    ],
}


async def test_a_confusable_pair_is_never_shown_nor_joined_by_a_judge_saying_same(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(entity_resolution="llm", entity_judge_similarity=0.1))
    install(fake_llm, CONFUSABLE)
    fake_llm.handlers["judge"] = always_same
    await ingest(app, ["first doc"])
    await ingest(app, ["second doc"])
    shown = {frozenset(p) for p in shown_pairs(fake_llm)}
    assert frozenset(("Naseem Khan", "Imran Khan")) not in shown
    assert frozenset(("Acme Holdings", "Acme Holding Group")) not in shown
    keys, _ = await graph(app)
    assert keys == {"naseem khan", "imran khan", "acme holdings", "acme holding group"}
    assert await rows(app, select(entity_merge_ledger)) == []


STRANGERS = {
    "first doc": [
        *RENAMED["first doc"],
        entity_line("Haoran Zhou", "person", "Haoran Zhou audits the port of Madras for the trust."),
        entity_line("Inés Castillo", "person", "Inés Castillo audits the port of Madras for the trust."),
    ],
    "second doc": [
        *RENAMED["second doc"],
        entity_line("Haoran Xu", "person", "Haoran Xu audits the port of Chennai for the trust."),
        entity_line("Tomás Muñoz", "person", "Tomás Muñoz audits the port of Chennai for the trust."),
    ],
}


async def test_people_sharing_no_surname_are_never_shown_nor_joined_by_a_judge_saying_same(
    make_settings, start_app, fake_llm
):
    app = await start_app(make_settings(entity_resolution="llm", entity_judge_similarity=0.1))
    install(fake_llm, STRANGERS)
    fake_llm.handlers["judge"] = always_same
    await ingest(app, ["first doc"])
    await ingest(app, ["second doc"])
    shown = shown_pairs(fake_llm)
    assert ("Chennai", "Madras") in shown  # the judge was asked about the document's other names
    assert not [p for p in shown if {"Haoran Xu", "Tomás Muñoz"} & set(p)]
    keys, _ = await graph(app)
    assert {"haoran zhou", "haoran xu", "inés castillo", "tomás muñoz"} <= keys
    assert "chennai" not in keys


@pytest.mark.parametrize(
    ("answer", "joined"),
    [
        (answer_same_for("Madras", wrap="```json\n{}\n```"), True),
        (answer_same_for("Madras", wrap="Having compared them:\n{}\nBoth are the same port city."), True),
        (lambda messages: '{"verdicts": [{"same": true, "reason": "no pair id"}]}', False),
        (lambda messages: '{"verdicts": [{"pair": 41, "same": true}, {"pair": "Chennai", "same": true}]}', False),
        (lambda messages: "I would need more context to say.", False),
    ],
    ids=["fenced", "prose around", "missing ids", "unknown ids", "no json"],
)
async def test_messy_answers_about_proposed_pairs_are_read_or_ignored(
    make_settings, start_app, fake_llm, answer, joined
):
    app = await start_app(make_settings(entity_resolution="llm"))
    install(fake_llm, RENAMED)
    fake_llm.handlers["judge"] = answer
    await ingest(app, ["first doc"])
    [doc] = await ingest(app, ["second doc"])
    assert doc["status"] == "processed"
    assert len(fake_llm.calls_of("judge")) == 1
    keys, _ = await graph(app)
    assert ("chennai" not in keys) is joined
    assert "madras" in keys


OLD_PORTS = ["Alsk", "Brevin", "Corro", "Dunmarch", "Eppel", "Fask"]
OLD_PORTS += ["Gorran", "Hulme", "Ivrea", "Jostel", "Kell", "Lurvan"]
NEW_PORTS = ["Morwen", "Nask", "Ostrel", "Pellin", "Quarve", "Rusk"]
NEW_PORTS += ["Sorrel", "Tamsk", "Ulverin", "Vask", "Wendal", "Yarrow"]


def _many_ports() -> dict[str, list[str]]:
    def line(name: str) -> str:
        return entity_line(name, "location", f"{name} is a port city on the coast.")

    return {"first doc": [line(n) for n in OLD_PORTS], "second doc": [line(n) for n in NEW_PORTS]}


async def test_the_proposed_pairs_are_capped_per_document(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(entity_resolution="llm", entity_judge_similarity=0.1))
    install(fake_llm, _many_ports())
    fake_llm.handlers["judge"] = lambda messages: '{"verdicts": []}'
    await ingest(app, ["first doc"])
    await ingest(app, ["second doc"])
    calls = fake_llm.calls_of("judge")  # the first document's new names are near each other too
    assert len(calls) == 2
    for call in calls:
        assert len(judge_pairs(call.messages)) == PER_DOCUMENT
    assert not [r for r in await rows(app, select(entity_merge_ledger)) if r["rule"] == "llm_judge"]  # no verdict


async def test_a_failing_embedding_call_leaves_the_rules_pairs_only(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(entity_resolution="llm"))
    install(fake_llm, RENAMED)
    fake_llm.handlers["judge"] = always_same
    await ingest(app, ["first doc"])
    fake_llm.refused_embedding_words.add("Chennai")  # the candidates' call (the chunk's text does not say it)
    [doc] = await ingest(app, ["second doc"])
    assert doc["status"] == "processed"
    assert fake_llm.calls_of("judge") == []  # nothing left open by the rules, nothing proposed
    keys, _ = await graph(app)
    assert {"madras", "chennai"} <= keys


CODED = {
    "name doc": [
        entity_line("Quorvex", "concept", "Quorvex is the coin struck on the Veldor isles."),
        entity_line("Mint Board", "organization", "The Mint Board strikes every Quorvex."),
        relation_line("Mint Board", "Quorvex", "strikes", "The Mint Board strikes every Quorvex."),
    ],
    "code doc": [
        entity_line("QRX", "concept", "QRX fell against sterling on Monday."),
        entity_line("Tomas Reyes", "person", "Tomas Reyes trades currencies for a living."),
        relation_line("Tomas Reyes", "QRX", "trades", "Tomas Reyes trades QRX."),
    ],
}


@pytest.mark.parametrize("order", [1, -1], ids=["name-first", "code-first"])
async def test_a_bare_code_reaches_the_judge_with_the_name_holding_its_letters(
    make_settings, start_app, fake_llm, order
):
    # descriptions sharing no word: the fake's embeddings do not bring them near, the code's letters do
    app = await start_app(make_settings(entity_resolution="llm"))
    install(fake_llm, CODED)
    fake_llm.handlers["judge"] = answer_same_for("Quorvex", "QRX")
    for marker in ("name doc", "code doc")[::order]:
        await ingest(app, [marker])
    assert {frozenset(p) for p in shown_pairs(fake_llm)} == {frozenset({"QRX", "Quorvex"})}
    keys, _ = await graph(app)
    assert len(keys & {"quorvex", "qrx"}) == 1


BOTH_IN_ONE = {
    "both doc": [
        entity_line("Madras", "location", "Madras is a port city on the Coromandel Coast of India."),
        entity_line("Chennai", "location", "Chennai is a port city on the Coromandel Coast of India."),
        relation_line("Madras", "Chennai", "renamed", "Madras was renamed Chennai."),
    ],
    "later doc": [
        entity_line("Chennai", "location", "Chennai is a port city on the Coromandel Coast of India."),
        entity_line("Leela Menon", "person", "Leela Menon audits shipping lines for a living."),
        relation_line("Leela Menon", "Chennai", "audits", "Leela Menon audits the port of Chennai."),
    ],
}


@pytest.mark.parametrize("order", [1, -1], ids=["both-first", "both-last"])
async def test_a_thing_named_two_ways_in_one_document_joins_in_either_order(make_settings, start_app, fake_llm, order):
    # both names new in one document: no stored entity to find, so the document's own names are offered
    app = await start_app(make_settings(entity_resolution="llm"))
    install(fake_llm, BOTH_IN_ONE)
    fake_llm.handlers["judge"] = answer_same_for("Madras", "Chennai")
    for marker in ("both doc", "later doc")[::order]:
        await ingest(app, [marker])
    assert {frozenset(p) for p in shown_pairs(fake_llm)} == {frozenset({"Madras", "Chennai"})}
    keys, _ = await graph(app)
    assert len(keys & {"madras", "chennai"}) == 1
