"""Token budgets: graph sections never exceed their budgets, and nothing sent to the LLM exceeds
max_total_tokens, conversation history included."""

from __future__ import annotations

import json

import pytest

from app.domain.context_budget import messages_tokens
from app.providers.tokenizer import get_tokenizer
from tests.support.graph_factory import GraphFactory

TOK = get_tokenizer()


def widget_graph() -> GraphFactory:
    g = GraphFactory()
    texts = [f"Widget part {i}. " + "widget assembly detail " * 120 for i in range(12)]
    ids = g.document("doc-w", "widgets.txt", texts)
    for i in range(12):
        g.entity(f"Widget {chr(65 + i)}", "artifact", "widget " * 250 + f"variant {i}", [ids[i], ids[(i + 1) % 12]])
    for i in range(11):
        g.relation(
            f"Widget {chr(65 + i)}", f"Widget {chr(66 + i)}", "widget linkage", "widget connects " * 150, [ids[i]]
        )
    return g


@pytest.fixture
async def wc(start_app, make_settings):
    app = await start_app(make_settings())
    async with app.container.db.transaction() as conn:
        await widget_graph().insert(conn)
    return app


def section_tokens(lines: list[dict]) -> int:
    return TOK.count("\n".join(json.dumps(x, ensure_ascii=False) for x in lines))


async def test_long_descriptions_are_cut_to_whole_items_within_budgets(wc):
    body = {
        "query": "widgets",
        "mode": "hybrid",
        "ll_keywords": ["widget"],
        "hl_keywords": ["widget linkage"],
        "max_entity_tokens": 1200,
        "max_relation_tokens": 1000,
        "only_need_context": True,
    }
    result = (await wc.http.post("/query", json=body)).json()
    entities, relations = result["context"]["entities"], result["context"]["relations"]
    assert 1 <= len(entities) < 12 and 1 <= len(relations) < 11
    assert (
        section_tokens([{"entity": e["name"], "type": e["type"], "description": e["description"]} for e in entities])
        <= 1200
    )
    assert (
        section_tokens(
            [
                {
                    "entity1": r["source"],
                    "entity2": r["target"],
                    "keywords": r["keywords"],
                    "description": r["description"],
                }
                for r in relations
            ]
        )
        <= 1000
    )
    assert all(e["description"].endswith(f"variant {ord(e['name'][-1]) - 65}") for e in entities)  # whole items


@pytest.mark.parametrize("max_total", [2500, 6000])
async def test_total_prompt_with_long_history_never_exceeds_max_total_tokens(wc, fake_llm, max_total):
    history = []
    for i in range(6):
        history.append({"role": "user", "content": f"question {i} " + "history words " * 300})
        history.append({"role": "assistant", "content": f"answer {i} " + "reply words " * 300})
    body = {
        "query": "How are the widgets assembled?",
        "mode": "mix",
        "ll_keywords": ["widget"],
        "hl_keywords": ["widget linkage"],
        "max_total_tokens": max_total,
        "conversation_history": history,
    }
    response = await wc.http.post("/query", json=body)
    assert response.status_code == 200, response.text
    [call] = fake_llm.calls_of("query")
    assert messages_tokens(TOK, call.messages) <= max_total
    sent_history = call.messages[1:-1]
    assert sent_history and sent_history == history[-len(sent_history) :]  # the most recent turns survive
    assert call.messages[-1]["content"] == "How are the widgets assembled?"


async def test_chunks_fill_what_is_left_of_the_budget(wc, fake_llm):
    body = {
        "query": "How are the widgets assembled?",
        "mode": "mix",
        "ll_keywords": ["widget"],
        "hl_keywords": ["widget linkage"],
        "max_entity_tokens": 600,
        "max_relation_tokens": 400,
    }
    everything = (await wc.http.post("/query", json={**body, "only_need_context": True})).json()["context"]["chunks"]
    longest = max(TOK.count(c["content"]) for c in everything) + 20
    await wc.http.post("/query", json={**body, "max_total_tokens": 2200})
    [call] = fake_llm.calls_of("query")
    used = messages_tokens(TOK, call.messages)
    assert 2200 - 200 - longest < used <= 2200  # filled up to the margin: not even one more chunk fits
    sent = [c["content"] for c in everything if c["content"] in call.messages[0]["content"]]
    assert 0 < len(sent) < len(everything)
    assert sent == [c["content"] for c in everything][: len(sent)]  # a prefix of the ranked chunk list


async def test_budget_too_small_for_instructions_is_422(wc):
    response = await wc.http.post(
        "/query", json={"query": "widgets", "mode": "local", "ll_keywords": ["widget"], "max_total_tokens": 50}
    )
    assert response.status_code == 422
    assert response.json()["code"] == "token_budget_too_small"


@pytest.mark.parametrize("mode", ["local", "hybrid", "mix"])
async def test_modes_with_entities_give_the_chunks_asked_for_room_before_weak_graph_lines(wc, mode):
    body = {
        "query": "How are the widgets assembled?",
        "mode": mode,
        "ll_keywords": ["widget"],
        "hl_keywords": ["widget linkage"],
        "chunk_top_k": 3,
        "max_entity_tokens": 1200,
        "max_relation_tokens": 1000,
        "only_need_context": True,
    }
    roomy = (await wc.http.post("/query", json=body)).json()["context"]
    tight = (await wc.http.post("/query", json={**body, "max_total_tokens": 3200})).json()["context"]
    assert len(roomy["chunks"]) == 3
    assert [c["id"] for c in tight["chunks"]] == [c["id"] for c in roomy["chunks"]]
    # the graph lines kept are its best ones (a prefix of each ranked section), relations going first
    assert tight["relations"] == roomy["relations"][: len(tight["relations"])]
    assert tight["entities"] == roomy["entities"][: len(tight["entities"])]
    assert len(tight["relations"]) < len(roomy["relations"])
    assert tight["entities"], "dropping relations made room enough: the entities stay"
    # global keeps LightRAG's order of precedence: its graph lines first, the chunks in the room left
    glob = (await wc.http.post("/query", json={**body, "mode": "global", "max_total_tokens": 2400})).json()
    assert len(glob["context"]["chunks"]) < 3 and glob["context"]["relations"]
