"""hybrid and mix never return less than local (a question about a named entity) or global (a thematic
question) at the same budget: each side's leading items come before the round-robin rest, so token trimming
cuts the weaker items of both sides first."""

from __future__ import annotations

import pytest

from tests.support.graph_factory import GraphFactory

OWN_EDGES = 8
THEME_EDGES = 10
BUDGETS = (150, 250, 400)  # relation tokens: a few relations, about half of them, most of them


def graph() -> GraphFactory:
    g = GraphFactory("default")
    chunks = g.document(
        "doc-h", "h.txt", [f"Chunk {i} of the harbour chronicle." for i in range(OWN_EDGES + THEME_EDGES)]
    )
    g.entity("Hollin Drake", "person", "A harbour master of Veskar.", [chunks[0]])
    for i in range(OWN_EDGES):
        g.entity(f"Drake Kin {i}", "person", f"Relative number {i} of the harbour master.", [chunks[i]])
        g.relation(
            "Hollin Drake",
            f"Drake Kin {i}",
            "family, inheritance",
            f"Hollin Drake left a boat to Drake Kin {i}.",
            [chunks[i]],
        )
    for i in range(THEME_EDGES):
        a, b = f"Trader {i}", f"Port {i}"
        g.entity(a, "organisation", f"A trading house, founded in year {i}.", [chunks[OWN_EDGES + i]])
        g.entity(b, "place", f"A small port, number {i}.", [chunks[OWN_EDGES + i]])
        g.relation(
            a, b, "trade route, shipping", f"{a} ran a trade route through {b}.", [chunks[OWN_EDGES + i]], weight=3.0
        )
    return g


@pytest.fixture
async def app(start_app, make_settings):
    app = await start_app(make_settings(cosine_threshold=0.2))
    async with app.container.db.transaction() as conn:
        await graph().insert(conn)
    return app


async def context(app, **body) -> dict:
    body = {"only_need_context": True, "chunk_selection": "weight", **body}
    response = await app.http.post("/query", json=body)
    assert response.status_code == 200, response.text
    return response.json()["context"]


def pairs(ctx: dict) -> set[frozenset[str]]:
    return {frozenset((r["source"], r["target"])) for r in ctx["relations"]}


def names(ctx: dict) -> set[str]:
    return {e["name"] for e in ctx["entities"]}


@pytest.mark.parametrize("budget", BUDGETS)
async def test_entity_question_hybrid_and_mix_keep_everything_local_finds(app, budget):
    ask = {
        "query": "What do we know about Hollin Drake and trade?",
        "ll_keywords": ["Hollin Drake"],
        "hl_keywords": ["trade route"],
        "max_relation_tokens": budget,
        "max_entity_tokens": 4 * budget,
    }
    local = await context(app, mode="local", **ask)
    assert local["relations"], "the budget must hold at least one relation"
    for mode in ("hybrid", "mix"):
        merged = await context(app, mode=mode, **ask)
        assert pairs(local) <= pairs(merged), mode
        assert names(local) <= names(merged), mode


@pytest.mark.parametrize("budget", BUDGETS)
async def test_thematic_question_hybrid_and_mix_keep_the_themed_relations_global_finds(app, budget):
    ask = {
        "query": "Which trade routes are there?",
        "ll_keywords": ["merchants"],
        "hl_keywords": ["trade route"],
        "max_relation_tokens": budget,
    }
    global_ = await context(app, mode="global", **ask)
    themed = {p for p in pairs(global_) if any(name.startswith("Trader") for name in p)}
    assert themed
    for mode in ("hybrid", "mix"):
        assert themed <= pairs(await context(app, mode=mode, **ask)), mode


async def test_named_entity_edges_fill_a_tight_budget_before_the_other_side(app):
    ctx = await context(
        app,
        mode="hybrid",
        query="Hollin Drake?",
        ll_keywords=["Hollin Drake"],
        hl_keywords=["trade route"],
        max_relation_tokens=250,
    )
    found = [frozenset((r["source"], r["target"])) for r in ctx["relations"]]
    own = [p for p in found if "Hollin Drake" in p]
    assert own and found[: len(own)] == own  # all of the named entity's edges lead
