"""Graph-ranked retrieval (QUERY_GRAPH_RANK) on small stored graphs: a chunk reached only through an entity two
hops from the named one is chosen, global mode answers when its high-level keywords are generic, hybrid keeps
what local alone returns, and local mode without low-level keywords of its own also searches the themes."""

from __future__ import annotations

import pytest

from tests.support.graph_factory import GraphFactory


def two_hop_graph() -> GraphFactory:
    """Ansel Drur – Brin Okto – Cato Remm; Cato's chunk is cited by nothing Ansel's edges reach directly."""
    g = GraphFactory("default")
    texts = ["Ansel Drur grew up by the sea.", "Ansel Drur and Brin Okto sailed together."]
    texts += ["Brin Okto later hired Cato Remm.", "Cato Remm drew the harbour charts of Velm."]
    texts += [f"Filler page {i} about weather and tides." for i in range(6)]
    c = g.document("doc-sea", "sea.txt", texts)
    g.entity("Ansel Drur", "person", "A sailor.", [c[0]])
    g.entity("Brin Okto", "person", "A captain.", [c[1]])
    g.entity("Cato Remm", "person", "A cartographer.", [c[3]])
    g.relation("Ansel Drur", "Brin Okto", "voyage", "Ansel Drur and Brin Okto sailed together.", [c[1]])
    g.relation("Brin Okto", "Cato Remm", "employment", "Brin Okto later hired Cato Remm.", [c[2]])
    for i in range(6):  # unrelated entities, so a vector search has other things to find
        g.entity(f"Tide Gauge {i}", "artifact", f"Gauge number {i}.", [c[4 + i]])
    return g


def birthplace_graph() -> GraphFactory:
    g = GraphFactory("default")
    c = g.document("doc-bio", "bio.txt", ["Dara Wynn was born in Port Elsby.", "Port Elsby exports salt and rope."])
    g.entity("Dara Wynn", "person", "A poet.", [c[0]])
    g.entity("Port Elsby", "location", "A harbour town.", [c[0], c[1]])
    g.relation("Dara Wynn", "Port Elsby", "origin", "Dara Wynn was born in Port Elsby.", [c[0]])
    return g


async def started(start_app, make_settings, graph: GraphFactory, **settings):
    app = await start_app(make_settings(cosine_threshold=0.2, **settings))
    async with app.container.db.transaction() as conn:
        await graph.insert(conn)
    return app


async def context(app, **body) -> dict:
    response = await app.http.post("/query", json={"only_need_context": True, **body})
    assert response.status_code == 200, response.text
    return response.json()["context"]


def chunk_texts(ctx: dict) -> list[str]:
    return [c["content"] for c in ctx["chunks"]]


async def test_a_chunk_reached_only_through_a_two_hop_entity_is_returned(start_app, make_settings):
    app = await started(start_app, make_settings, two_hop_graph())
    body = {"query": "Who did Ansel Drur know?", "mode": "local", "ll_keywords": ["Ansel Drur"], "top_k": 2}
    ranked = chunk_texts(await context(app, **body))
    assert "Cato Remm drew the harbour charts of Velm." in ranked
    # LightRAG's per-item picks only take the chunks of the entities and relations in the context
    picked = chunk_texts(await context(app, **body, chunk_selection="weight"))
    assert "Cato Remm drew the harbour charts of Velm." not in picked
    voyage = "Ansel Drur and Brin Okto sailed together."
    assert voyage in picked and voyage in ranked


@pytest.mark.parametrize("graph_rank", [True, False])
async def test_global_answers_when_the_high_level_keywords_are_generic(start_app, make_settings, graph_rank):
    app = await started(start_app, make_settings, birthplace_graph(), query_graph_rank=graph_rank)
    ctx = await context(app, query="Where was Dara Wynn born?", mode="global", hl_keywords=["place of birth"])
    found = [{r["source"], r["target"]} for r in ctx["relations"]]
    if graph_rank:  # the whole question's vector finds the relation the generic phrase misses
        assert found == [{"Dara Wynn", "Port Elsby"}]
        assert "Dara Wynn was born in Port Elsby." in chunk_texts(ctx)
    else:
        assert found == []


async def test_global_takes_the_low_level_keywords_when_no_theme_matches(start_app, make_settings):
    app = await started(start_app, make_settings, birthplace_graph())
    ctx = await context(app, query="Tell me more", mode="global", hl_keywords=["biography"], ll_keywords=["Dara Wynn"])
    assert [{r["source"], r["target"]} for r in ctx["relations"]] == [{"Dara Wynn", "Port Elsby"}]


async def test_hybrid_contains_what_local_alone_returns(start_app, make_settings):
    app = await started(start_app, make_settings, two_hop_graph())
    body = {"query": "Who did Ansel Drur know?", "ll_keywords": ["Ansel Drur"], "hl_keywords": ["voyage"]}
    local = await context(app, mode="local", **body)
    hybrid = await context(app, mode="hybrid", **body)
    mix = await context(app, mode="mix", **body)
    assert set(chunk_texts(local)) <= set(chunk_texts(hybrid))
    assert set(chunk_texts(local)) <= set(chunk_texts(mix))
    assert {e["name"] for e in local["entities"]} <= {e["name"] for e in hybrid["entities"]}


async def test_local_without_low_level_keywords_of_its_own_searches_the_themes(start_app, make_settings, fake_llm):
    app = await started(start_app, make_settings, birthplace_graph())
    fake_llm.handlers["keywords"] = lambda messages: '{"high_level_keywords": ["origin"], "low_level_keywords": []}'
    ctx = await context(app, query="Which relationships involve origin?", mode="local")
    assert [{r["source"], r["target"]} for r in ctx["relations"]] == [{"Dara Wynn", "Port Elsby"}]


def hub_graph(pages: int) -> GraphFactory:
    """One town cited by many pages; only the last page says who kept its lighthouse (and its id sorts late)."""
    g = GraphFactory("default")
    texts = [f"Filler page {i} about the weather and the tides near Harbour Town." for i in range(pages - 1)]
    texts.append("Mira Sol kept the lighthouse of Harbour Town for forty years.")
    c = g.document("doc-town", "town.txt", texts)
    g.entity("Harbour Town", "location", "A town by the sea.", c)
    return g


async def test_local_weighs_every_chunk_of_a_well_cited_entity_against_the_question(start_app, make_settings):
    from app.services.query.graph_chunks import CANDIDATES

    pages = CANDIDATES + 20
    app = await started(start_app, make_settings, hub_graph(pages))
    body = {"query": "Who kept the lighthouse of Harbour Town?", "ll_keywords": ["Harbour Town"], "chunk_top_k": pages}
    ctx = await context(app, mode="local", **body)
    # every page holds the same share of the town's rank: a cut by graph score alone (key order among equals)
    # would drop the last page before the question's words and vector were weighed
    assert "Mira Sol kept the lighthouse of Harbour Town for forty years." in chunk_texts(ctx)
    assert len(chunk_texts(ctx)) == pages


def bridge_graph() -> GraphFactory:
    """The question matches the lighthouse passage; the birthplace is in another passage that shares only
    the designer with it."""
    g = GraphFactory("default")
    texts = ["The Velm lighthouse was designed by Orla Fenn.", "Orla Fenn grew up in Kessa, by the salt flats."]
    texts += [f"Tide gauge {i} logs the water level every hour." for i in range(6)]
    c = g.document("doc-velm", "velm.txt", texts)
    g.entity("Velm Lighthouse", "building", "A lighthouse.", [c[0]])
    g.entity("Orla Fenn", "person", "An architect.", [c[0], c[1]])
    g.entity("Kessa", "location", "A town.", [c[1]])
    g.relation("Orla Fenn", "Kessa", "origin", "Orla Fenn grew up in Kessa.", [c[1]])
    for i in range(6):
        g.entity(f"Tide Gauge {i}", "artifact", f"Gauge number {i}.", [c[2 + i]])
    return g


async def test_a_passage_sharing_an_entity_with_the_passage_the_question_matches_is_returned(start_app, make_settings):
    app = await started(start_app, make_settings, bridge_graph())
    body = {"query": "Velm lighthouse designer?", "mode": "local", "ll_keywords": ["tide gauge"], "top_k": 2}
    ranked = chunk_texts(await context(app, **body, chunk_top_k=3))
    assert "The Velm lighthouse was designed by Orla Fenn." in ranked
    assert "Orla Fenn grew up in Kessa, by the salt flats." in ranked
    picked = chunk_texts(await context(app, **body, chunk_top_k=3, chunk_selection="weight"))
    assert "Orla Fenn grew up in Kessa, by the salt flats." not in picked
