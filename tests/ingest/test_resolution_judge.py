"""The LLM judge of entity resolution (ENTITY_RESOLUTION=llm) through the real pipeline, the model faked at the
HTTP edge: one call per document for the pairs the rules leave open, a merge only where it says "same" for
exactly one candidate, never for a pair the confusable guard keeps apart, its answer cached, counted in the
document's figures, recorded in the ledger; no call at all in the other modes."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from app.db.tables import entity_aliases, entity_merge_ledger
from tests.ingest.test_pipeline import entity_line, ingest, relation_line, rows
from tests.ingest.test_resolution_ingest import graph, install
from tests.support.fakes.judge_prompt import judge_pairs as read_judge_pairs

SIEMENS = {
    "first doc": [
        entity_line("Siemens Healthineers AG", "organization", "Siemens Healthineers AG makes scanners."),
        entity_line("Siemens Energy AG", "organization", "Siemens Energy AG builds turbines."),
        relation_line("Siemens Healthineers AG", "Siemens Energy AG", "group", "Both belong to one group."),
    ],
    "second doc": [
        entity_line("Siemens", "organization", "Siemens delivered two scanners to the clinic."),
        entity_line("Harbour Clinic", "organization", "The Harbour Clinic treats patients."),
        relation_line("Siemens", "Harbour Clinic", "supplies", "Siemens supplies the Harbour Clinic."),
    ],
}


def judge_pairs(messages) -> list[dict]:
    return read_judge_pairs(messages[-1]["content"])


def answer_same_for(*others: str, wrap: str = "{}"):
    """A judge answering "same" for the pairs one of whose names is one of `others` (a pair is shown the smaller
    key first, whichever side is the document's), the answer `wrap`ped."""

    def judge(messages) -> str:
        verdicts = [
            {
                "pair": p["pair"],
                "same": p["a"]["name"] in others or p["b"]["name"] in others,
                "reason": f"{p['a']['name']} sells scanners",
            }
            for p in judge_pairs(messages)
        ]
        return wrap.format(json.dumps({"verdicts": verdicts}))

    return judge


async def test_the_judge_joins_an_ambiguous_short_form_it_says_is_the_same(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(entity_resolution="llm"))
    install(fake_llm, SIEMENS)
    fake_llm.handlers["judge"] = answer_same_for("Siemens Healthineers AG")
    await ingest(app, ["first doc"])
    assert fake_llm.calls_of("judge") == []  # nothing open: no call
    calls_before = len(fake_llm.calls)
    [doc] = await ingest(app, ["second doc"])
    [call] = fake_llm.calls_of("judge")
    shown = {(p["a"]["name"], p["b"]["name"]) for p in judge_pairs(call.messages)}
    assert shown == {("Siemens", "Siemens Healthineers AG"), ("Siemens", "Siemens Energy AG")}
    assert all(p["a"]["description"] and p["b"]["type"] == "organization" for p in judge_pairs(call.messages))
    keys, pairs = await graph(app)
    assert keys == {"siemens healthineers ag", "siemens energy ag", "harbour clinic"}
    assert ("harbour clinic", "siemens healthineers ag") in pairs
    [row] = await rows(app, select(entity_merge_ledger))
    assert (row["entity_key"], row["merged_name"], row["rule"]) == ("siemens healthineers ag", "Siemens", "llm_judge")
    assert "sells scanners" in row["evidence"] and row["document_id"] == doc["id"]
    [alias] = await rows(app, select(entity_aliases).where(entity_aliases.c.alias_key.like("siemens%")))
    assert alias["entity_key"] == "siemens healthineers ag"
    assert alias["alias_key"] == f"siemens\x1f{doc['id']}"  # this document's reading only
    got = await app.http.get(f"/documents/{doc['id']}")
    assert got.json()["progress"]["llm_calls"] == len(fake_llm.calls) - calls_before  # the judge's call included


@pytest.mark.parametrize(
    "wrap",
    [
        "```json\n{}\n```",
        "Sure! Here is my assessment.\n{}\nThe first pair is clearly one company.",
        "<think>scanners point to Healthineers</think>{}",
    ],
    ids=["fenced", "trailing prose", "think"],
)
async def test_messy_judge_answers_are_read(make_settings, start_app, fake_llm, wrap):
    app = await start_app(make_settings(entity_resolution="llm"))
    install(fake_llm, SIEMENS)
    fake_llm.handlers["judge"] = answer_same_for("Siemens Healthineers AG", wrap=wrap)
    await ingest(app, ["first doc"])
    await ingest(app, ["second doc"])
    keys, _ = await graph(app)
    assert "siemens" not in keys


@pytest.mark.parametrize(
    "judge",
    [
        answer_same_for("Siemens Healthineers AG", "Siemens Energy AG"),
        lambda messages: "I am not sure about any of these.",
        lambda messages: '{"verdicts": [{"pair": 3, "same": true}, {"pair": "first", "same": true}]}',
    ],
    ids=["same for both", "prose only", "wrong indices"],
)
async def test_no_merge_unless_the_judge_settles_one_candidate(make_settings, start_app, fake_llm, judge):
    app = await start_app(make_settings(entity_resolution="llm"))
    install(fake_llm, SIEMENS)
    fake_llm.handlers["judge"] = judge
    await ingest(app, ["first doc"])
    await ingest(app, ["second doc"])
    assert len(fake_llm.calls_of("judge")) == 1
    keys, _ = await graph(app)
    assert "siemens" in keys
    assert await rows(app, select(entity_merge_ledger)) == []


ACME = {
    "first doc": [
        entity_line("Acme Holdings", "organization", "Acme Holdings owns ports."),
        entity_line("Naseem Khan", "person", "Naseem Khan chairs Acme Holdings."),
        relation_line("Naseem Khan", "Acme Holdings", "chairs", "Naseem Khan chairs Acme Holdings."),
    ],
    "second doc": [
        entity_line("Acme Holding Group", "organization", "Acme Holding Group runs ferries."),
        entity_line("Imran Khan", "person", "Imran Khan runs the ferries."),
        entity_line("Acme", "organization", "Acme was mentioned by the harbour master."),
        relation_line("Imran Khan", "Acme Holding Group", "runs", "Imran Khan runs Acme Holding Group."),
    ],
}


async def test_the_judge_never_joins_what_the_confusable_guard_keeps_apart(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(entity_resolution="llm"))
    install(fake_llm, ACME)

    def always_same(messages) -> str:
        return json.dumps({"verdicts": [{"pair": p["pair"], "same": True} for p in judge_pairs(messages)]})

    fake_llm.handlers["judge"] = always_same
    await ingest(app, ["first doc"])
    await ingest(app, ["second doc"])
    shown = {
        frozenset((p["a"]["name"], p["b"]["name"])) for c in fake_llm.calls_of("judge") for p in judge_pairs(c.messages)
    }
    assert frozenset(("Acme Holdings", "Acme Holding Group")) not in shown
    assert frozenset(("Naseem Khan", "Imran Khan")) not in shown
    keys, _ = await graph(app)
    assert {"acme holdings", "acme holding group", "naseem khan", "imran khan", "acme"} <= keys


async def test_the_verdict_is_cached_and_a_reingested_document_asks_nothing(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(entity_resolution="llm"))
    install(fake_llm, SIEMENS)
    fake_llm.handlers["judge"] = answer_same_for("Siemens Healthineers AG")
    await ingest(app, ["first doc"])
    [second] = await ingest(app, ["second doc"])
    before = await graph(app)
    response = await app.http.delete(f"/documents/{second['id']}")
    assert response.status_code == 200, response.text
    [again] = await ingest(app, ["second doc"])
    assert again["status"] == "processed"
    assert len(fake_llm.calls_of("judge")) == 1  # the same open pairs: the cached verdict
    assert await graph(app) == before


@pytest.mark.parametrize("mode", ["auto", "rules", "off", "suggest"])
async def test_other_modes_never_call_the_judge(make_settings, start_app, fake_llm, mode):
    app = await start_app(make_settings(entity_resolution=mode))
    install(fake_llm, SIEMENS)
    fake_llm.handlers["judge"] = answer_same_for("Siemens Healthineers AG")
    await ingest(app, ["first doc"])
    await ingest(app, ["second doc"])
    assert fake_llm.calls_of("judge") == []
    keys, _ = await graph(app)
    assert "siemens" in keys


async def test_a_type_mismatch_is_left_to_the_judge(make_settings, start_app, fake_llm):
    records = {
        "first doc": [entity_line("Fiorano Reactor", "artifact", "The Fiorano Reactor is a research reactor.")],
        "second doc": [entity_line("fiorano-reactor", "facility", "The fiorano-reactor site was inspected.")],
    }
    app = await start_app(make_settings(entity_resolution="llm"))
    install(fake_llm, records)
    fake_llm.handlers["judge"] = answer_same_for("Fiorano Reactor")
    await ingest(app, ["first doc"])
    await ingest(app, ["second doc"])
    keys, _ = await graph(app)
    assert keys == {"fiorano reactor"}
    [row] = await rows(app, select(entity_merge_ledger))
    assert row["rule"] == "llm_judge"


async def test_a_failing_judge_leaves_the_rules_result(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(entity_resolution="llm", llm_max_retries=0))
    install(fake_llm, SIEMENS)
    await ingest(app, ["first doc"])
    fake_llm.fail_next(5, status=500, operation="judge")
    [doc] = await ingest(app, ["second doc"])
    assert doc["status"] == "processed"
    keys, _ = await graph(app)
    assert "siemens" in keys
