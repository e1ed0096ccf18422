"""The LLM judge (ENTITY_RESOLUTION=llm) answers a pair of names the same whichever came first, through the real
pipeline with the model and embeddings faked at the HTTP edge: a pair is shown the smaller key first whichever
side is the document's, so a model reading pairs one way round joins a rename in every order; a pair's verdict
is kept under the unordered pair, so the pair asked again from a later document is answered from there, with no
call, even by a model that would now answer otherwise."""

from __future__ import annotations

import json

import pytest

from tests.ingest.test_judge_candidates import RENAMED, shown_pairs
from tests.ingest.test_pipeline import entity_line, ingest, relation_line
from tests.ingest.test_resolution_ingest import graph, install
from tests.ingest.test_resolution_judge import judge_pairs

AGAIN = {
    "third doc": [
        entity_line("Chennai", "location", "Chennai is a port city on the Coromandel Coast with a busy harbour."),
        entity_line("Ravi Iyer", "person", "Ravi Iyer pilots ships into the harbour."),
        relation_line("Ravi Iyer", "Chennai", "pilots", "Ravi Iyer pilots ships into Chennai."),
    ]
}


def first_shown(name: str):
    """A model with a position habit: "same" only when `name` is the pair's first side."""

    def judge(messages) -> str:
        verdicts = [{"pair": p["pair"], "same": p["a"]["name"] == name, "reason": "r"} for p in judge_pairs(messages)]
        return json.dumps({"verdicts": verdicts})

    return judge


def answer_all(same: bool):
    def judge(messages) -> str:
        return json.dumps(
            {"verdicts": [{"pair": p["pair"], "same": same, "reason": "r"} for p in judge_pairs(messages)]}
        )

    return judge


@pytest.mark.parametrize("order", [("first doc", "second doc"), ("second doc", "first doc")], ids=["old", "new"])
async def test_a_rename_gives_one_node_in_either_order(make_settings, start_app, fake_llm, order):
    app = await start_app(make_settings(entity_resolution="llm"))
    install(fake_llm, RENAMED)
    fake_llm.handlers["judge"] = first_shown("Chennai")  # "chennai" < "madras": shown first either way
    for marker in order:
        await ingest(app, [marker])
    assert len(fake_llm.calls_of("judge")) == 1
    keys, _ = await graph(app)
    assert keys - {"harbour trust", "leela menon"} in ({"madras"}, {"chennai"})


async def test_a_pair_judged_apart_is_answered_so_again_without_a_call(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(entity_resolution="llm"))
    install(fake_llm, RENAMED | AGAIN)
    fake_llm.handlers["judge"] = answer_all(False)
    await ingest(app, ["first doc"])
    [second] = await ingest(app, ["second doc"])
    assert len(fake_llm.calls_of("judge")) == 1
    assert (await app.http.delete(f"/documents/{second['id']}")).status_code == 200
    fake_llm.handlers["judge"] = answer_all(True)  # the model would now say otherwise: it is not asked
    [third] = await ingest(app, ["third doc"])
    assert third["status"] == "processed"
    assert len(fake_llm.calls_of("judge")) == 1
    keys, _ = await graph(app)
    assert {"madras", "chennai"} <= keys


def island(name: str) -> str:
    text = f"{name} is an island nation of the South Pacific Ocean, a chain of volcanic islands east of Australia."
    return entity_line(name, "location", text)


# Vanuatu's three nearest are the other islands, New Hebrides only its fourth; New Hebrides, stored alone
# before it, has Vanuatu as its nearest. A pair chosen by rank would be asked in one order only.
ISLANDS = {
    "old names doc": [island(n) for n in ("New Hebrides", "Fiji", "Tonga", "Samoa")],
    "new name doc": [
        island("Vanuatu"),
        entity_line("Ana Tupou", "person", "Ana Tupou charts reefs for a living."),
        relation_line("Ana Tupou", "Vanuatu", "charts", "Ana Tupou charts the reefs of Vanuatu."),
    ],
}


@pytest.mark.parametrize("order", [1, -1], ids=["old-names-first", "new-name-first"])
async def test_a_pair_beyond_a_names_nearest_is_asked_and_joined_in_either_order(
    make_settings, start_app, fake_llm, order
):
    app = await start_app(make_settings(entity_resolution="llm"))
    install(fake_llm, ISLANDS)
    fake_llm.handlers["judge"] = answer_pair("New Hebrides", "Vanuatu")
    for marker in ("old names doc", "new name doc")[::order]:
        await ingest(app, [marker])
    assert frozenset({"New Hebrides", "Vanuatu"}) in {frozenset(p) for p in shown_pairs(fake_llm)}
    keys, _ = await graph(app)
    assert len(keys & {"new hebrides", "vanuatu"}) == 1
    assert {"fiji", "tonga", "samoa"} <= keys


def answer_pair(a: str, b: str):
    """ "same" for the pair of `a` and `b` only."""

    def judge(messages) -> str:
        verdicts = [
            {"pair": p["pair"], "same": {p["a"]["name"], p["b"]["name"]} == {a, b}, "reason": "r"}
            for p in judge_pairs(messages)
        ]
        return json.dumps({"verdicts": verdicts})

    return judge


# Twelve islands of keys before "new hebrides", described as Vanuatu and New Hebrides are. Stored before Vanuatu,
# they and New Hebrides are its thirteen candidates, New Hebrides the last by key: a cap of twelve dropped it in
# that order and asked it in the other (New Hebrides stored just after Vanuatu, its one candidate).
MANY_ISLANDS = ["Aoba", "Banks", "Efate", "Fiji", "Guam", "Epi", "Malo", "Maewo", "Erromango", "Kiribati"]
MANY_ISLANDS += ["Lifou", "Ambae"]
CAPPED = {
    "islands doc": [island(n) for n in MANY_ISLANDS],
    "hebrides doc": [island("New Hebrides")],
    "vanuatu doc": ISLANDS["new name doc"],
}


@pytest.mark.parametrize(
    "order",
    [("islands doc", "hebrides doc", "vanuatu doc"), ("vanuatu doc", "hebrides doc", "islands doc")],
    ids=["vanuatu-last", "vanuatu-first"],
)
async def test_a_pair_a_cap_of_twelve_dropped_in_one_order_is_asked_in_both(make_settings, start_app, fake_llm, order):
    app = await start_app(make_settings(entity_resolution="llm"))
    install(fake_llm, CAPPED)
    fake_llm.handlers["judge"] = answer_pair("New Hebrides", "Vanuatu")
    for marker in order:
        await ingest(app, [marker])
    with_vanuatu = [p for p in shown_pairs(fake_llm) if "Vanuatu" in p]
    if order[-1] == "vanuatu doc":  # the cap of twelve binds here
        assert len(with_vanuatu) == len(MANY_ISLANDS) + 1
    assert frozenset({"New Hebrides", "Vanuatu"}) in {frozenset(p) for p in shown_pairs(fake_llm)}
    keys, _ = await graph(app)
    assert len(keys & {"new hebrides", "vanuatu"}) == 1
    assert {k.casefold() for k in MANY_ISLANDS} <= keys
