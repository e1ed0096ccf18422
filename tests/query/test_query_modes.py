"""POST /query per mode on a hand-built graph: each mode retrieves exactly what it should."""

from __future__ import annotations

import pytest

from app.prompts.answer import NO_CONTEXT_ANSWER
from tests.support.query_graph import MAZE_DESC, ROMANCE_DESC, THRESHOLD, WEATHER_QUERY, algernon_graph

LL = ["Charlie Gordon"]
HL = ["mentorship, romance"]


@pytest.fixture
async def qc(start_app, make_settings):
    app = await start_app(make_settings(cosine_threshold=THRESHOLD))
    async with app.container.db.transaction() as conn:
        await algernon_graph().insert(conn)
    return app


async def ask(qc, **body) -> dict:
    body.setdefault("chunk_selection", "weight")
    response = await qc.http.post("/query", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def names(body: dict) -> list[str]:
    return [e["name"] for e in body["context"]["entities"]]


def pairs(body: dict) -> list[tuple[str, str]]:
    return [(r["source"], r["target"]) for r in body["context"]["relations"]]


def chunk_ids(body: dict) -> list[tuple[str, str]]:
    return [(c["id"], c["source"]) for c in body["context"]["chunks"]]


async def test_local_finds_entity_by_low_level_keywords_and_ranks_its_edges(qc, fake_llm):
    body = await ask(qc, query="Tell me about him", mode="local", ll_keywords=LL, only_need_context=True)
    # the named entity, then its neighbours (part of what is known about it) in the order of its edges
    assert names(body) == ["Charlie Gordon", "Algernon", "Alice Kinnian"]
    entity = body["context"]["entities"][0]
    assert entity["description"] == "A man with an intellectual disability who undergoes experimental brain surgery."
    assert entity["degree"] == 2 and entity["source_chunk_ids"] == ["doc-novel-c0", "doc-novel-c1"]
    # the named entity's edges, closest to the question first
    assert pairs(body) == [("Algernon", "Charlie Gordon"), ("Alice Kinnian", "Charlie Gordon")]
    # entity chunks: c1 (listed by Charlie and Algernon) before c0, then Alice's c2; nothing left for relations
    assert chunk_ids(body) == [("doc-novel-c1", "entity"), ("doc-novel-c0", "entity"), ("doc-novel-c2", "entity")]
    assert body["response"] is None
    assert body["keywords"] == {"high_level": [], "low_level": LL}
    assert body["references"] == [{"reference_id": "1", "document_id": "doc-novel", "file_path": "novel.txt"}]
    assert fake_llm.calls == []  # keywords given, only_need_context: no LLM call at all


async def test_global_finds_relation_by_high_level_keywords_without_naming_entities(qc):
    body = await ask(qc, query="Is there a love story?", mode="global", hl_keywords=HL, only_need_context=True)
    assert pairs(body) == [("Alice Kinnian", "Charlie Gordon")]
    assert body["context"]["relations"][0]["description"] == ROMANCE_DESC
    assert body["context"]["relations"][0]["keywords"] == "mentorship, romance"
    assert names(body) == ["Alice Kinnian", "Charlie Gordon"]  # the ends, in order of appearance
    # weighted polling over 2 entities: expected 5 and 1; Alice has 1, shortfall goes to Charlie
    assert chunk_ids(body) == [("doc-novel-c2", "entity"), ("doc-novel-c0", "entity"), ("doc-novel-c1", "entity")]


async def test_hybrid_merges_local_and_global_round_robin_without_duplicates(qc):
    body = await ask(
        qc, query="Charlie and love", mode="hybrid", ll_keywords=LL, hl_keywords=HL, only_need_context=True
    )
    assert names(body) == ["Charlie Gordon", "Alice Kinnian", "Algernon"]
    # the named entity's edges lead, ranked by relevance to the question ("love"), not by edge degree
    assert pairs(body) == [("Alice Kinnian", "Charlie Gordon"), ("Algernon", "Charlie Gordon")]
    assert [r["description"] for r in body["context"]["relations"]] == [ROMANCE_DESC, MAZE_DESC]
    assert all(c["source"] != "vector" for c in body["context"]["chunks"])


async def test_mix_adds_vector_chunks_first_in_round_robin(qc):
    body = await ask(qc, query=WEATHER_QUERY, mode="mix", ll_keywords=LL, hl_keywords=HL, only_need_context=True)
    assert names(body) == ["Charlie Gordon", "Algernon", "Alice Kinnian"]
    chunks = chunk_ids(body)
    assert chunks[0] == ("doc-lab-c1", "vector")
    assert ("doc-novel-c0", "entity") in chunks
    assert len({c for c, _ in chunks}) == len(chunks)
    refs = {r["document_id"]: r["reference_id"] for r in body["references"]}
    assert set(refs) == {"doc-lab", "doc-novel"} and refs["doc-novel"] == "1"  # most cited first
    assert {c["reference_id"] for c in body["context"]["chunks"] if c["document_id"] == "doc-lab"} == {refs["doc-lab"]}


async def test_naive_uses_only_chunk_vector_search(qc, fake_llm):
    body = await ask(qc, query=WEATHER_QUERY, mode="naive", only_need_context=True)
    assert body["context"]["entities"] == [] and body["context"]["relations"] == []
    assert chunk_ids(body) == [("doc-lab-c1", "vector")]
    assert body["keywords"] == {"high_level": [], "low_level": []}
    assert fake_llm.calls == []


async def test_bypass_sends_query_and_history_without_retrieval(qc, fake_llm):
    history = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]
    body = await ask(qc, query="What is two plus two?", mode="bypass", conversation_history=history)
    assert body["context"] == {"entities": [], "relations": [], "chunks": []}
    assert body["response"] == "Direct answer to 'What is two plus two?'."
    [call] = fake_llm.calls_of("bypass")
    assert [m["content"] for m in call.messages] == ["Hi", "Hello", "What is two plus two?"]
    assert fake_llm.calls_of("keywords") == [] and fake_llm.embedding_inputs == []


async def test_answer_uses_context_in_system_prompt_and_query_last(qc, fake_llm):
    body = await ask(qc, query="Who is Charlie Gordon?", mode="local", ll_keywords=LL)
    assert body["response"] == "Answer to 'Who is Charlie Gordon?' from the provided context."
    [call] = fake_llm.calls_of("query")
    system, user = call.messages[0]["content"], call.messages[-1]
    assert user == {"role": "user", "content": "Who is Charlie Gordon?"}
    assert '"entity": "Charlie Gordon"' in system and "Charlie Gordon is a man" in system
    assert "<SEP>" not in system
    assert "[1] novel.txt" in system


async def test_keywords_extracted_once_then_cached(qc, fake_llm):
    first = await ask(qc, query="Who is Charlie Gordon?", mode="local", only_need_context=True)
    assert first["keywords"]["low_level"] == ["Charlie Gordon"]
    assert names(first)[0] == "Charlie Gordon"
    [call] = fake_llm.calls_of("keywords")
    assert call.json_mode and call.messages[-1]["content"].rstrip().endswith("Query: Who is Charlie Gordon?")
    second = await ask(qc, query="Who is Charlie Gordon?", mode="hybrid", only_need_context=True)
    assert second["keywords"] == first["keywords"]
    assert len(fake_llm.calls_of("keywords")) == 1


async def test_follow_up_history_reaches_keyword_extraction(qc, fake_llm):
    history = [{"role": "user", "content": "Who is Charlie Gordon?"}, {"role": "assistant", "content": "A man."}]
    await ask(qc, query="tell me more", mode="local", conversation_history=history, only_need_context=True)
    [call] = fake_llm.calls_of("keywords")
    assert "user: Who is Charlie Gordon?" in call.messages[-1]["content"]


async def test_empty_keywords_short_query_becomes_low_level_keyword(qc, fake_llm):
    fake_llm.handlers["keywords"] = lambda messages: "I cannot help with that."
    body = await ask(qc, query="Charlie Gordon", mode="local", only_need_context=True)
    assert body["keywords"] == {"high_level": [], "low_level": ["Charlie Gordon"]}
    assert names(body)[0] == "Charlie Gordon"


async def test_empty_keywords_long_query_returns_no_context_without_error(qc, fake_llm):
    fake_llm.handlers["keywords"] = lambda messages: '{"high_level_keywords": [], "low_level_keywords": []}'
    query = "please answer this rather long question that yields no keywords at all, thanks"
    body = await ask(qc, query=query, mode="hybrid")
    assert body["response"] == NO_CONTEXT_ANSWER
    assert body["context"] == {"entities": [], "relations": [], "chunks": []}
    assert fake_llm.calls_of("query") == []
    await ask(qc, query=query, mode="hybrid")
    assert len(fake_llm.calls_of("keywords")) == 2  # empty keyword answers are not cached


async def test_only_need_prompt_returns_the_prompt_without_answer_call(qc, fake_llm):
    body = await ask(
        qc,
        query="Who is Charlie Gordon?",
        mode="local",
        ll_keywords=LL,
        only_need_prompt=True,
        user_prompt="Answer in one sentence.",
    )
    assert body["response"] is None
    assert body["prompt"].endswith("---User Query---\n\nWho is Charlie Gordon?")
    assert "Answer in one sentence." in body["prompt"] and "Charlie Gordon is a man" in body["prompt"]
    assert fake_llm.calls_of("query") == []


async def test_answer_cache_hit_makes_no_second_call_but_history_bypasses_it(qc, fake_llm):
    for _ in range(2):
        await ask(qc, query="Who is Charlie Gordon?", mode="local", ll_keywords=LL)
    assert len(fake_llm.calls_of("query")) == 1
    history = [{"role": "user", "content": "Hi"}]
    for _ in range(2):
        await ask(qc, query="Who is Charlie Gordon?", mode="local", ll_keywords=LL, conversation_history=history)
    assert len(fake_llm.calls_of("query")) == 3


async def test_model_answer_is_never_post_processed(qc, fake_llm):
    text = "The user asked; the model says: Who is Charlie Gordon? <system>kept</system>"
    fake_llm.handlers["query"] = lambda messages: text
    body = await ask(qc, query="Who is Charlie Gordon?", mode="local", ll_keywords=LL)
    assert body["response"] == text


async def test_projects_are_isolated(qc):
    await qc.http.post("/projects", json={"id": "other"})
    body = await ask(qc, project_id="other", query=WEATHER_QUERY, mode="mix", ll_keywords=LL, hl_keywords=HL)
    assert body["context"] == {"entities": [], "relations": [], "chunks": []}


async def test_local_with_only_high_level_keywords_falls_back_to_them(qc):
    body = await ask(qc, query="love?", mode="local", hl_keywords=HL, only_need_context=True)
    assert pairs(body) == [("Alice Kinnian", "Charlie Gordon")]


async def test_history_turns_keeps_only_the_last_turns(qc, fake_llm):
    history = [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "one"},
        {"role": "user", "content": "second"},
        {"role": "assistant", "content": "two"},
    ]
    await ask(
        qc, query="Who is Charlie Gordon?", mode="local", ll_keywords=LL, conversation_history=history, history_turns=1
    )
    [call] = fake_llm.calls_of("query")
    assert [m["content"] for m in call.messages[1:]] == ["second", "two", "Who is Charlie Gordon?"]


async def test_thematic_question_gets_high_level_keywords_that_reach_relations(qc, fake_llm):
    body = await ask(qc, query="Is there any mentorship or romance?", mode="global", only_need_context=True)
    # an empty low-level list falls back to the query text and the high-level keywords
    assert body["keywords"] == {
        "high_level": ["mentorship", "romance"],
        "low_level": ["Is there any mentorship or romance?", "mentorship", "romance"],
    }
    assert pairs(body) == [("Alice Kinnian", "Charlie Gordon")]
    [call] = fake_llm.calls_of("keywords")
    prompt = call.messages[0]["content"]
    assert prompt.index("high_level_keywords") < prompt.index("Query: Is there any mentorship")  # examples first
