"""Claims and citations through POST /query and /query/stream, with a fake model that cites its context."""

from __future__ import annotations

import json

import pytest

from tests.support.fakes.cited_answers import chunk_with, citing
from tests.support.query_graph import THRESHOLD, algernon_graph

LOCAL = {"query": "Who is Charlie Gordon?", "mode": "local", "ll_keywords": ["Charlie Gordon"]}


@pytest.fixture
async def qc(start_app, make_settings):
    app = await start_app(make_settings(cosine_threshold=THRESHOLD))
    async with app.container.db.transaction() as conn:
        await algernon_graph().insert(conn)
    return app


def messy_answer(chunks: list[dict]) -> str:
    charlie = chunk_with(chunks, "experiment")
    alice = chunk_with(chunks, "Beekman")
    return (
        "## Charlie\n\n"
        f"Charlie Gordon is a man who takes part in an experiment to raise his intelligence [{charlie['id']}].\n\n"
        f"- Alice Kinnian teaches reading at the Beekman school ({alice['id']})\n"
        "- Charlie Gordon was born in 1921 in Zanzibar [c99]\n"
        f"- Algernon is a laboratory mouse who underwent the same surgery before Charlie. [{alice['id']}]\n\n"
        "### References\n- [1] novel.txt\n"
    )


def sse_events(text: str) -> list[dict]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


def check_claims(body: dict, answer: str) -> dict[str, dict]:
    chunks = {c["id"]: c["content"] for c in body["context"]["chunks"]}
    for claim in body["claims"]:
        assert answer[claim["start"] : claim["end"]] == claim["text"]
        for cited in claim["citations"]:
            assert cited["document_id"] == "doc-novel" and cited["file_path"] == "novel.txt"
            assert 0 <= cited["start"] < cited["end"] <= len(chunks[cited["chunk_id"]])
            assert 0 < cited["score"] <= 1
    return {claim["text"]: claim for claim in body["claims"]}


async def test_query_answers_carry_checked_claims(qc, fake_llm):
    fake_llm.handlers["query"] = citing(messy_answer)
    response = await qc.http.post("/query", json=LOCAL)
    assert response.status_code == 200, response.text
    body = response.json()
    answer = body["response"]
    assert "[c" not in answer and "(c" not in answer and "References" not in answer  # the model's list left out
    claims = check_claims(body, answer)
    assert list(claims) == [
        "Charlie Gordon is a man who takes part in an experiment to raise his intelligence [1].",
        "Alice Kinnian teaches reading at the Beekman school",
        "Charlie Gordon was born in 1921 in Zanzibar",
        "Algernon is a laboratory mouse who underwent the same surgery before Charlie.",
    ]
    first = claims["Charlie Gordon is a man who takes part in an experiment to raise his intelligence [1]."]
    chunks = {c["id"]: c["content"] for c in body["context"]["chunks"]}
    [cited] = first["citations"]
    assert first["support"] == "supported"
    assert chunks[cited["chunk_id"]][cited["start"] : cited["end"]].startswith("Charlie Gordon is a man")
    invented = claims["Charlie Gordon was born in 1921 in Zanzibar"]
    assert invented["support"] == "unsupported" and invented["citations"] == []  # its marker [c99] was dropped
    # marked with the wrong chunk: re-attributed to the chunk that says it
    mouse = claims["Algernon is a laboratory mouse who underwent the same surgery before Charlie."]
    assert mouse["support"] == "supported"
    assert "laboratory mouse" in chunks[mouse["citations"][0]["chunk_id"]]


async def test_one_embedding_call_per_answer_and_lexical_only_when_it_fails(qc, fake_llm):
    seen: list[int] = []

    def answer(messages: list[dict]) -> str:
        seen.append(fake_llm.embedding_requests)
        fake_llm.embeddings_down = len(seen) == 2
        return citing(messy_answer)(messages)

    fake_llm.handlers["query"] = answer
    body = (await qc.http.post("/query", json=LOCAL)).json()
    assert fake_llm.embedding_requests == seen[0] + 1
    supports = [c["support"] for c in body["claims"]]
    failed = (await qc.http.post("/query", json={**LOCAL, "query": "Who is Charlie Gordon, really?"})).json()
    assert (
        [c["support"] for c in failed["claims"]] == supports == ["supported", "supported", "unsupported", "supported"]
    )


@pytest.mark.parametrize("path,extra", [("/query/stream", {}), ("/query", {"stream": True})])
async def test_the_stream_rewrites_markers_and_ends_with_the_claims(qc, fake_llm, path, extra):
    fake_llm.handlers["query"] = citing(messy_answer)
    response = await qc.http.post(path, json={**LOCAL, **extra})
    events = sse_events(response.text)
    streamed = "".join(e["text"] for e in events if e["type"] == "chunk")
    final = events[-1]
    assert final["type"] == "done" and "[c" not in streamed and "(c" not in streamed
    assert streamed.startswith(final["response"]) and "### References" in streamed[len(final["response"]) :]
    assert [c["support"] for c in check_claims(final, final["response"]).values()] == [
        "supported",
        "supported",
        "unsupported",
        "supported",
    ]
    json_body = (await qc.http.post("/query", json=LOCAL)).json()
    assert json_body["response"] == final["response"] and json_body["claims"] == final["claims"]


@pytest.mark.parametrize(
    "body",
    [
        {**LOCAL, "only_need_context": True},
        {**LOCAL, "only_need_prompt": True},
        {"query": "Who is Charlie Gordon?", "mode": "bypass"},
        {"query": "Who?", "project_id": "empty", "mode": "local", "ll_keywords": ["Nobody"]},
    ],
)
async def test_no_claims_without_an_answer_from_a_context(qc, fake_llm, body):
    await qc.http.post("/projects", json={"id": "empty"})
    fake_llm.handlers["query"] = citing(messy_answer)
    fake_llm.handlers["bypass"] = lambda messages: "Charlie [c1] is fine."
    response = await qc.http.post("/query", json=body)
    assert response.status_code == 200 and response.json()["claims"] == []
    stream = sse_events((await qc.http.post("/query/stream", json=body)).text)
    assert stream[-1]["type"] == "done" and stream[-1]["claims"] == []


@pytest.mark.parametrize("answer", ["", "   ", "[c1]", "### Nothing\n\n```\ncode\n```", "Yes."])
async def test_empty_or_claimless_answers_have_no_or_unsupported_claims(qc, fake_llm, answer):
    fake_llm.handlers["query"] = lambda messages: answer
    response = await qc.http.post("/query", json=LOCAL)
    assert response.status_code == 200, response.text
    claims = response.json()["claims"]
    assert all(c["support"] == "unsupported" and c["citations"] == [] for c in claims)


async def test_markers_in_code_stay_as_written_through_the_api(qc, fake_llm):
    def answer(chunks: list[dict]) -> str:
        charlie = chunk_with(chunks, "experiment")["id"]
        return f"Charlie Gordon takes part in an experiment [{charlie}]. Read it with `notes[{charlie}]`.\n"

    fake_llm.handlers["query"] = citing(answer)
    body = (await qc.http.post("/query", json=LOCAL)).json()
    events = sse_events((await qc.http.post("/query/stream", json={**LOCAL, "query": "Charlie?"})).text)
    for text in (body["response"], events[-1]["response"]):
        assert text.startswith("Charlie Gordon takes part in an experiment [1]. Read it with `notes[c")
