"""The optional LLM check of claims (CITATION_LLM_CHECK): one cached call per answer for the `partial` claims,
which it may confirm or downgrade, never raise; messy replies read, unreadable ones change nothing."""

from __future__ import annotations

import json

import pytest

from app.services.citations.llm_review import OPERATION, read_verdicts
from tests.support.fakes.cited_answers import chunk_with, citing
from tests.support.query_graph import THRESHOLD, algernon_graph

LOCAL = {"query": "Who is Charlie Gordon?", "mode": "local", "ll_keywords": ["Charlie Gordon"]}
SUPPORTED = "Charlie Gordon is a man who takes part in an experiment to raise his intelligence."
PARTIAL = "Charlie Gordon takes part in several trials and studies abroad."
INVENTED = "Charlie Gordon was born in 1921 in Zanzibar."


def _answer(chunks: list[dict]) -> str:
    charlie = chunk_with(chunks, "experiment")["id"]
    return f"{SUPPORTED} [{charlie}] {PARTIAL} [{charlie}] {INVENTED} [{charlie}]"


async def _app(start_app, make_settings, **overrides):
    app = await start_app(make_settings(cosine_threshold=THRESHOLD, **overrides))
    async with app.container.db.transaction() as conn:
        await algernon_graph().insert(conn)
    return app


def _supports(body: dict) -> list[str]:
    return [c["support"] for c in body["claims"]]


async def test_off_by_default_no_call(start_app, make_settings, fake_llm):
    app = await _app(start_app, make_settings)
    fake_llm.handlers["query"] = citing(_answer)
    body = (await app.http.post("/query", json=LOCAL)).json()
    assert _supports(body) == ["supported", "partial", "unsupported"]
    assert fake_llm.calls_of(OPERATION) == []


async def test_one_call_downgrades_partial_counted_and_cached(start_app, make_settings, fake_llm):
    app = await _app(start_app, make_settings, citation_llm_check=True)
    fake_llm.handlers["query"] = citing(_answer)
    fake_llm.handlers[OPERATION] = lambda messages: '```json\n{"verdicts": [{"id": 1, "support": "unsupported"}]}\n```'
    response = await app.http.post("/query", json=LOCAL)
    body = response.json()
    assert _supports(body) == ["supported", "unsupported", "unsupported"]
    [call] = fake_llm.calls_of(OPERATION)
    sent = [json.loads(line) for line in call.messages[-1]["content"].splitlines()[1:]]
    assert [s["statement"] for s in sent] == [PARTIAL]  # only the partial claim, with its cited passage
    assert "Charlie Gordon" in sent[0]["passages"][0]
    assert int(response.headers["X-Token-Input"]) == sum(c.prompt_tokens for c in fake_llm.calls)
    downgraded = body["claims"][1]
    assert len(downgraded["citations"]) == 1  # what the source says instead stays visible
    # the same answer again: the check's verdict comes from the cache, no second call
    again = (await app.http.post("/query", json=LOCAL)).json()
    assert _supports(again) == _supports(body) and len(fake_llm.calls_of(OPERATION)) == 1


@pytest.mark.parametrize(
    "reply",
    [
        '[{"id": 1, "support": "supported"}]',  # never raised: partial stays partial
        "I cannot judge that.",
        '{"verdicts": [{"id": 7, "support": "unsupported"}]}',  # a statement that was not asked about
    ],
)
async def test_a_claim_is_never_raised_and_bad_replies_change_nothing(start_app, make_settings, fake_llm, reply):
    app = await _app(start_app, make_settings, citation_llm_check=True, enable_llm_cache=False)
    fake_llm.handlers["query"] = citing(_answer)
    fake_llm.handlers[OPERATION] = lambda messages: reply
    assert _supports((await app.http.post("/query", json=LOCAL)).json()) == ["supported", "partial", "unsupported"]


async def test_a_failed_check_keeps_the_answer_and_its_verdicts(start_app, make_settings, fake_llm):
    app = await _app(start_app, make_settings, citation_llm_check=True, enable_llm_cache=False, llm_max_retries=0)
    fake_llm.handlers["query"] = citing(_answer)
    fake_llm.fail_next(5, status=500, operation=OPERATION)
    response = await app.http.post("/query/stream", json=LOCAL)
    final = [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: ")][-1]
    assert final["type"] == "done" and _supports(final) == ["supported", "partial", "unsupported"]


@pytest.mark.parametrize(
    ("reply", "verdicts"),
    [
        (
            '{"verdicts": [{"id": 1, "support": "Unsupported"}, {"id": "2", "support": "partial"}]}',
            {1: "unsupported", 2: "partial"},
        ),
        ('<think>hmm [1]</think>\n```json\n["supported", "not supported"]\n```', {1: "supported", 2: "unsupported"}),
        ('Here you go: {"1": "unsupported", "2": "SUPPORTED"} hope it helps', {1: "unsupported", 2: "supported"}),
        ('{"verdicts": [{"id": 1, "support": "unsupported"}, {"id": 2, "support": "supp', {1: "unsupported"}),
        ("1: unsupported\nStatement 2 - **partial**", {1: "unsupported", 2: "partial"}),
        ('{"verdicts": [{"id": 9, "support": "unsupported"}, {"id": 1, "support": "maybe"}]}', {}),
        ("", {}),
    ],
)
def test_messy_replies_are_read(reply, verdicts):
    assert read_verdicts(reply, 2) == verdicts
