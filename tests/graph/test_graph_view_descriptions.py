"""GET /graph shows multi-part descriptions as query contexts do (one fragment per line, no raw `<SEP>`);
the LightRAG-compatible graph keeps the stored text, as LightRAG Server returns it."""

from __future__ import annotations

import json

from app.domain.context_budget import entity_line
from app.domain.hits import EntityHit
from app.domain.texts import SEP, readable
from app.services.graph.view import GraphViewService
from tests.support.curation import seed_graph

ALICE = SEP.join(["Alice runs the lab.", "Alice writes grants.", "  "])
LINK = SEP.join(["Alice funds Bob.", "Alice mentors Bob."])


async def test_graph_descriptions_are_rendered_like_query_contexts(app_client):
    async with app_client.container.db.transaction() as conn:
        await seed_graph(
            conn,
            ents=[("Alice", "person", ALICE, []), ("Bob", "person", "Bob studies.", [])],
            rels=[("Alice", "Bob", LINK, "funding", 1.0, [])],
        )
    response = await app_client.http.get("/graph", params={"label": "Alice"})
    assert response.status_code == 200, response.text
    body = response.json()
    nodes = {n["id"]: n for n in body["nodes"]}
    assert nodes["Alice"]["description"] == "Alice runs the lab.\nAlice writes grants."
    assert nodes["Bob"]["description"] == "Bob studies."
    (edge,) = body["edges"]
    assert edge["description"] == "Alice funds Bob.\nAlice mentors Bob."
    assert SEP not in response.text
    # exactly what the query context shows for the same entity
    hit = EntityHit(key="alice", name="Alice", entity_type="person", description=ALICE, degree=1, file_paths=[])
    assert json.loads(entity_line(hit))["description"] == nodes["Alice"]["description"] == readable(ALICE)


async def test_compatible_graph_keeps_the_stored_separator(app_client):
    async with app_client.container.db.transaction() as conn:
        await seed_graph(conn, ents=[("Alice", "person", ALICE, [])])
    graph = await GraphViewService(app_client.container).subgraph("default", "Alice", 1, 10, raw_descriptions=True)
    assert graph.nodes[0].description == ALICE
