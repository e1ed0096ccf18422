"""GET /graph: breadth-first subgraph by label or `*`, depth and node limits, truncation flag, 4xx."""

from __future__ import annotations

import pytest

from tests.support.curation import seed_graph

# Hub — N1..N5; N1 — M1 — Far (a chain hanging off N1); N2 — N3 (an edge between neighbours).
ENTS = [(n, "concept", f"{n} desc.", []) for n in ["Hub", "N1", "N2", "N3", "N4", "N5", "M1", "Far", "Lonely"]]
RELS = [("Hub", f"N{i}", f"Hub-N{i}", "k", 1.0, []) for i in range(1, 6)] + [
    ("N1", "M1", "N1-M1", "k", 1.0, []),
    ("M1", "Far", "M1-Far", "k", 1.0, []),
    ("N2", "N3", "N2-N3", "k", 1.0, []),
]


@pytest.fixture
async def seeded(app_client):
    async with app_client.container.db.transaction() as conn:
        await seed_graph(conn, ents=ENTS, rels=RELS)
    return app_client


async def _graph(app, **params):
    response = await app.http.get("/graph", params=params)
    assert response.status_code == 200, response.text
    body = response.json()
    return body, [n["id"] for n in body["nodes"]], {tuple(sorted((e["source"], e["target"]))) for e in body["edges"]}


async def test_star_returns_highest_degree_nodes(seeded):
    body, nodes, edges = await _graph(seeded, label="*", max_nodes=3)
    assert nodes == ["Hub", "M1", "N1"]  # degrees 5, 2, 2 (ties by key)
    assert edges == {("Hub", "N1"), ("M1", "N1")}
    assert body["is_truncated"] is True
    everything, all_nodes, all_edges = await _graph(seeded, label="*")
    assert len(all_nodes) == 9 and len(all_edges) == 8 and everything["is_truncated"] is False


async def test_depth_limits_the_expansion(seeded):
    _, nodes, edges = await _graph(seeded, label="hub", max_depth=1)
    assert nodes[0] == "Hub" and set(nodes) == {"Hub", "N1", "N2", "N3", "N4", "N5"}
    assert ("N2", "N3") in edges and len(edges) == 6
    _, nodes, _ = await _graph(seeded, label="Hub", max_depth=2)
    assert "M1" in nodes and "Far" not in nodes
    body, nodes, _ = await _graph(seeded, label="Hub", max_depth=3)
    assert "Far" in nodes and "Lonely" not in nodes and body["is_truncated"] is False


async def test_node_limit_prefers_high_degree_neighbours(seeded):
    body, nodes, edges = await _graph(seeded, label="Hub", max_depth=3, max_nodes=4)
    assert nodes == ["Hub", "N1", "N2", "N3"]
    assert body["is_truncated"] is True
    assert edges == {("Hub", "N1"), ("Hub", "N2"), ("Hub", "N3"), ("N2", "N3")}
    node = body["nodes"][0]
    assert node == {"id": "Hub", "entity_type": "concept", "description": "Hub desc.", "degree": 5}


async def test_exact_fit_is_not_truncated(seeded):
    body, nodes, _ = await _graph(seeded, label="Far", max_depth=1, max_nodes=2)
    assert nodes == ["Far", "M1"] and body["is_truncated"] is False


async def test_graph_errors_and_empty_project(seeded):
    http = seeded.http
    missing = await http.get("/graph", params={"label": "Nobody"})
    assert missing.status_code == 404 and missing.json()["code"] == "entity_not_found"
    assert (await http.get("/graph", params={"max_depth": 0})).status_code == 422
    assert (await http.get("/graph", params={"max_nodes": 0})).status_code == 422
    assert (await http.get("/graph", params={"project_id": "nope"})).status_code == 404
    await http.post("/projects", json={"id": "empty"})
    empty = await http.get("/graph", params={"project_id": "empty"})
    assert empty.json() == {"nodes": [], "edges": [], "is_truncated": False}
