"""Questions naming several entities get the entities and relations connecting them (paths of length two),
ahead of the named entities' other edges, within the budget."""

from __future__ import annotations

import pytest

from tests.support.graph_factory import GraphFactory

# Two hubs, Orlen Vask and Teodra Quill, each with many unrelated edges; linked only through Pell Marrow.
HUB_EDGES = 12


def hub_graph(direct: bool = False) -> GraphFactory:
    g = GraphFactory("default")
    texts = [f"Filler chunk number {i} about nothing in particular." for i in range(2 * HUB_EDGES + 3)]
    chunks = g.document("doc-hubs", "hubs.txt", texts)
    g.entity("Orlen Vask", "person", "A shipping magnate of the northern coast.", [chunks[0]])
    g.entity("Teodra Quill", "person", "A judge in the capital.", [chunks[1]])
    g.entity("Pell Marrow", "person", "A clerk who worked for both.", [chunks[2]])
    g.relation("Orlen Vask", "Pell Marrow", "employment", "Pell Marrow kept the books of Orlen Vask.", [chunks[2]])
    g.relation(
        "Pell Marrow", "Teodra Quill", "legal dispute", "Pell Marrow testified before Teodra Quill.", [chunks[2]]
    )
    if direct:
        g.relation("Orlen Vask", "Teodra Quill", "legal dispute", "Orlen Vask sued Teodra Quill once.", [chunks[1]])
    for i in range(HUB_EDGES):
        g.entity(f"Vask Partner {i}", "organisation", f"Trading house number {i}.", [chunks[3 + i]])
        g.relation(
            "Orlen Vask",
            f"Vask Partner {i}",
            "supply contract",
            f"Orlen Vask shipped grain for Vask Partner {i}.",
            [chunks[3 + i]],
            weight=5.0,
        )
        g.entity(f"Quill Case {i}", "event", f"Court case number {i}.", [chunks[3 + HUB_EDGES + i]])
        g.relation(
            "Teodra Quill",
            f"Quill Case {i}",
            "court ruling",
            f"Teodra Quill ruled on Quill Case {i}.",
            [chunks[3 + HUB_EDGES + i]],
            weight=5.0,
        )
    return g


@pytest.fixture
async def app(start_app, make_settings):
    app = await start_app(make_settings(cosine_threshold=0.3))
    async with app.container.db.transaction() as conn:
        await hub_graph().insert(conn)
    return app


async def ask(app, **body) -> dict:
    body = {"only_need_context": True, "chunk_selection": "weight", **body}
    response = await app.http.post("/query", json=body)
    assert response.status_code == 200, response.text
    return response.json()["context"]


def pairs(context: dict) -> list[set[str]]:
    return [{r["source"], r["target"]} for r in context["relations"]]


async def test_path_between_named_entities_leads_the_relations_and_brings_the_middle_entity(app):
    context = await ask(
        app,
        query="How is Orlen Vask connected to Teodra Quill?",
        mode="local",
        ll_keywords=["Orlen Vask", "Teodra Quill"],
        max_relation_tokens=150,
    )
    found = pairs(context)
    assert found[:2] == [{"Orlen Vask", "Pell Marrow"}, {"Pell Marrow", "Teodra Quill"}]
    names = [e["name"] for e in context["entities"]]
    assert names[:3] == ["Orlen Vask", "Teodra Quill", "Pell Marrow"]


async def test_paths_survive_a_tight_budget_in_hybrid_and_mix(app):
    for mode in ("hybrid", "mix"):
        context = await ask(
            app,
            query="How is Orlen Vask connected to Teodra Quill?",
            mode=mode,
            ll_keywords=["orlen  vask", "TEODRA QUILL"],
            hl_keywords=["connection"],
            max_relation_tokens=120,
            top_k=3,
        )
        assert {"Orlen Vask", "Pell Marrow"} in pairs(context), mode
        assert {"Pell Marrow", "Teodra Quill"} in pairs(context), mode
        assert "Pell Marrow" in [e["name"] for e in context["entities"]], mode


async def test_direct_edges_between_named_entities_come_first(start_app, make_settings):
    app = await start_app(make_settings(cosine_threshold=0.3))
    async with app.container.db.transaction() as conn:
        await hub_graph(direct=True).insert(conn)
    context = await ask(
        app, query="Orlen Vask and Teodra Quill?", mode="local", ll_keywords=["Orlen Vask", "Teodra Quill"]
    )
    assert pairs(context)[:3] == [
        {"Orlen Vask", "Teodra Quill"},
        {"Orlen Vask", "Pell Marrow"},
        {"Pell Marrow", "Teodra Quill"},
    ]


async def test_a_single_named_entity_gets_its_own_edges_first_and_its_neighbours(app):
    context = await ask(
        app, query="What do we know about Pell Marrow?", mode="local", ll_keywords=["Pell Marrow"], top_k=5
    )
    assert pairs(context)[:2] == [{"Orlen Vask", "Pell Marrow"}, {"Pell Marrow", "Teodra Quill"}] or pairs(context)[
        :2
    ] == [{"Pell Marrow", "Teodra Quill"}, {"Orlen Vask", "Pell Marrow"}]
    names = [e["name"] for e in context["entities"]]
    assert names[0] == "Pell Marrow" and set(names[1:3]) == {"Orlen Vask", "Teodra Quill"}
