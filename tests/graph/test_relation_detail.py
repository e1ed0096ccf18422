"""GET /relations/detail: one relation, named by its ends in either order (or an alias), with the chunks it
was read from and their files; unknown ends or relations and bad input are clear 4xx."""

from __future__ import annotations

import pytest

from tests.graph.test_entities_api import GRAPH
from tests.support.curation import seed_graph


@pytest.fixture
async def seeded(app_client):
    async with app_client.container.db.transaction() as conn:
        await seed_graph(conn, **GRAPH)
    return app_client


async def test_a_relation_with_its_source_chunks_in_either_order(seeded):
    for source, target in (("Alpha", "Zed"), ("zed", " ALPHA ")):
        response = await seeded.http.get("/relations/detail", params={"source": source, "target": target})
        assert response.status_code == 200, response.text
        body = response.json()
        assert (body["source"], body["target"]) == ("Alpha", "Zed")
        assert body["description"] == "Alpha lives in Zed." and body["keywords"] == "residence"
        assert body["weight"] == 1.0
        assert [(c["chunk_id"], c["document_id"], c["file_path"]) for c in body["source_chunks"]] == [
            ("c2", "d1", "d1.txt"),
            ("c3", "d2", "d2.txt"),
        ]


async def test_unknown_relations_and_bad_input_are_clear_4xx(seeded):
    http = seeded.http
    none = await http.get("/relations/detail", params={"source": "Beta Corp", "target": "Zed"})
    assert none.status_code == 404 and none.json()["code"] == "relation_not_found"
    nobody = await http.get("/relations/detail", params={"source": "Alpha", "target": "Nobody"})
    assert nobody.status_code == 404 and nobody.json()["code"] == "relation_not_found"
    itself = await http.get("/relations/detail", params={"source": "Alpha", "target": "alpha"})
    assert itself.status_code == 422 and itself.json()["code"] == "self_relation"
    assert (await http.get("/relations/detail", params={"source": "Alpha"})).status_code == 422
    assert (await http.get("/relations/detail", params={"source": "Alpha", "target": ""})).status_code == 422
    other = await http.get("/relations/detail", params={"source": "Alpha", "target": "Zed", "project_id": "nope"})
    assert other.status_code == 404 and other.json()["code"] == "project_not_found"
