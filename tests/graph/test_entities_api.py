"""Entities and relations curation API: reads, create, edit, rename, delete, relation CRUD, and their 4xx."""

from __future__ import annotations

import pytest

from app.db.tables import entity_sources, relation_sources
from app.domain.names import entity_key
from app.domain.texts import entity_embedding_text, relation_embedding_text, text_hash
from tests.support.curation import (
    count,
    entity_provenance,
    entity_row,
    relation_provenance,
    relation_row,
    seed_graph,
)

GRAPH = {
    "docs": {"d1": ["c1", "c2"], "d2": ["c3"]},
    "ents": [
        ("Alpha", "person", "Alpha leads the team.", ["c1", "c3"]),
        ("Mid", "organization", "Mid is a company.", ["c1"]),
        ("Zed", "location", "Zed is a city.", ["c2"]),
        ("Beta Corp", "organization", "Beta Corp makes widgets.", ["c3"]),
    ],
    "rels": [
        ("Alpha", "Mid", "Alpha works at Mid.", "employment", 2.0, ["c1"]),
        ("Alpha", "Zed", "Alpha lives in Zed.", "residence", 1.0, ["c2", "c3"]),
        ("Mid", "Zed", "Mid is based in Zed.", "location", 1.0, ["c2"]),
    ],
}


@pytest.fixture
async def seeded(app_client):
    async with app_client.container.db.transaction() as conn:
        await seed_graph(conn, **GRAPH)
    return app_client


def _embedded(row: dict, text: str) -> bool:
    return row["embedding"] is not None and row["embedded_hash"] == text_hash(text)


# ----- reads -----


async def test_list_sorted_by_degree_then_name_with_filters(seeded):
    http = seeded.http
    body = (await http.get("/entities")).json()
    assert [e["name"] for e in body["entities"]] == ["Alpha", "Mid", "Zed", "Beta Corp"]
    assert [e["degree"] for e in body["entities"]] == [2, 2, 2, 0]
    assert body["total"] == 4

    found = (await http.get("/entities", params={"q": "CORP"})).json()
    assert [e["name"] for e in found["entities"]] == ["Beta Corp"]
    typed = (await http.get("/entities", params={"type": "Organization"})).json()
    assert [e["name"] for e in typed["entities"]] == ["Mid", "Beta Corp"]
    page = (await http.get("/entities", params={"limit": 2, "offset": 1})).json()
    assert [e["name"] for e in page["entities"]] == ["Mid", "Zed"]
    assert page["total"] == 4
    empty = (await http.get("/entities", params={"q": "nothing-like-this", "offset": 0})).json()
    assert empty == {"entities": [], "total": 0, "limit": 100, "offset": 0}


async def test_list_bad_input_and_unknown_project(seeded):
    http = seeded.http
    assert (await http.get("/entities", params={"limit": 0})).status_code == 422
    assert (await http.get("/entities", params={"offset": -1})).status_code == 422
    assert (await http.get("/entities", params={"project_id": "Bad Id"})).status_code == 422
    missing = await http.get("/entities", params={"project_id": "nope"})
    assert missing.status_code == 404 and missing.json()["code"] == "project_not_found"


async def test_get_entity_with_provenance_and_relations(seeded):
    response = await seeded.http.get("/entities/  ALPHA ")
    assert response.status_code == 200
    body = response.json()
    assert body["name"] == "Alpha" and body["curated"] is False  # extracted, never edited by hand
    assert body["description"] == "Alpha leads the team."
    assert body["degree"] == 2 and body["relations_total"] == 2
    assert [s["chunk_id"] for s in body["source_chunks"]] == ["c1", "c3"]
    assert [s["document_id"] for s in body["source_chunks"]] == ["d1", "d2"]
    assert body["file_paths"] == ["d1.txt", "d2.txt"]
    assert [(r["source"], r["target"]) for r in body["relations"]] == [("Alpha", "Mid"), ("Alpha", "Zed")]

    missing = await seeded.http.get("/entities/Nobody")
    assert missing.status_code == 404 and missing.json()["code"] == "entity_not_found"
    assert (await seeded.http.get("/entities/Alpha", params={"project_id": "nope"})).status_code == 404


async def test_entity_name_with_slash_in_path(seeded):
    created = await seeded.http.post("/entities", json={"name": "AC/DC", "description": "A band."})
    assert created.status_code == 201
    assert (await seeded.http.get("/entities/ac/dc")).json()["name"] == "AC/DC"


# ----- create -----


async def test_create_entity_is_embedded_without_provenance(seeded):
    response = await seeded.http.post("/entities", json={"name": " Gamma  Ray ", "description": "A ray."})
    assert response.status_code == 201
    body = response.json()
    assert body["name"] == "Gamma Ray" and body["entity_type"] == "unknown" and body["degree"] == 0
    assert body["curated"] is True
    async with seeded.container.db.connect() as conn:
        row = await entity_row(conn, "gamma ray")
        assert _embedded(row, entity_embedding_text("Gamma Ray", "A ray."))
        assert await entity_provenance(conn, "Gamma Ray") == []

    typed = await seeded.http.post(
        "/entities", json={"name": "Delta", "description": "D.", "entity_type": "Natural Object"}
    )
    assert typed.json()["entity_type"] == "naturalobject"


async def test_create_entity_errors(seeded):
    http = seeded.http
    dup = await http.post("/entities", json={"name": "alpha", "description": "again"})
    assert dup.status_code == 409 and dup.json()["code"] == "entity_exists"
    assert (await http.post("/entities", json={"name": "X1", "description": "   "})).status_code == 422
    assert (await http.post("/entities", json={"name": "X1"})).status_code == 422
    unusable = await http.post("/entities", json={"name": "12", "description": "digits"})
    assert unusable.status_code == 422 and unusable.json()["code"] == "invalid_entity_name"
    assert (await http.post("/entities", json={"name": "X1", "description": "d", "bogus": 1})).status_code == 422
    nope = await http.post("/entities", json={"project_id": "nope", "name": "X1", "description": "d"})
    assert nope.status_code == 404


# ----- edit / rename -----


async def test_edit_description_and_type_reembeds(seeded):
    response = await seeded.http.patch(
        "/entities/alpha", json={"description": "Alpha retired.", "entity_type": "Veteran"}
    )
    assert response.status_code == 200
    assert response.json()["description"] == "Alpha retired." and response.json()["entity_type"] == "veteran"
    async with seeded.container.db.connect() as conn:
        assert _embedded(await entity_row(conn, "Alpha"), entity_embedding_text("Alpha", "Alpha retired."))


async def test_edit_errors(seeded):
    http = seeded.http
    assert (await http.patch("/entities/Nobody", json={"description": "x"})).status_code == 404
    assert (await http.patch("/entities/Alpha", json={})).status_code == 422
    assert (await http.patch("/entities/Alpha", json={"description": ""})).status_code == 422
    assert (await http.patch("/entities/Alpha", json={"new_name": '""'})).status_code == 422


async def test_rename_moves_relations_provenance_and_embeddings(seeded):
    response = await seeded.http.patch("/entities/Alpha", json={"new_name": "Zulu"})
    assert response.status_code == 200
    assert response.json()["name"] == "Zulu" and response.json()["degree"] == 2
    async with seeded.container.db.connect() as conn:
        assert await entity_row(conn, "Alpha") is None
        zulu = await entity_row(conn, "Zulu")
        assert zulu["description"] == "Alpha leads the team." and zulu["entity_type"] == "person"
        assert _embedded(zulu, entity_embedding_text("Zulu", "Alpha leads the team."))
        assert await entity_provenance(conn, "Zulu") == ["c1", "c3"]
        # (alpha, mid) became (mid, zulu): re-sorted, provenance followed, re-embedded with the new name.
        moved = await relation_row(conn, "Mid", "Zulu")
        assert (moved["src_key"], moved["tgt_key"]) == ("mid", "zulu") and moved["weight"] == 2.0
        assert _embedded(moved, relation_embedding_text("Mid", "Zulu", "employment", "Alpha works at Mid."))
        assert await relation_provenance(conn, "Zulu", "Mid") == ["c1"]
        assert await relation_provenance(conn, "Zulu", "Zed") == ["c2", "c3"]
        assert await relation_row(conn, "Alpha", "Mid") is None
        assert (await entity_row(conn, "Mid"))["degree"] == 2
        assert await count(conn, relation_sources) == 4
    old_name = await seeded.http.get("/entities/Alpha")  # the old name stays an alias of the entity
    assert old_name.status_code == 200 and old_name.json()["name"] == "Zulu"
    assert old_name.json()["aliases"] == ["Alpha"]
    detail = (await seeded.http.get("/entities/zulu")).json()
    assert sorted((r["source"], r["target"]) for r in detail["relations"]) == [("Mid", "Zulu"), ("Zed", "Zulu")]


async def test_rename_onto_existing_entity_is_409_and_changes_nothing(seeded):
    response = await seeded.http.patch("/entities/Alpha", json={"new_name": "mid", "description": "changed"})
    assert response.status_code == 409
    assert response.json()["code"] == "entity_exists"
    assert "/entities/merge" in response.json()["detail"]
    async with seeded.container.db.connect() as conn:
        assert (await entity_row(conn, "Alpha"))["description"] == "Alpha leads the team."
        assert await relation_row(conn, "Alpha", "Mid") is not None


async def test_rename_to_case_variant_changes_display_name_only(seeded):
    response = await seeded.http.patch("/entities/Alpha", json={"new_name": "ALPHA"})
    assert response.status_code == 200 and response.json()["name"] == "ALPHA"
    async with seeded.container.db.connect() as conn:
        row = await entity_row(conn, "alpha")
        assert row["key"] == entity_key("Alpha") and row["name"] == "ALPHA"
        assert _embedded(row, entity_embedding_text("ALPHA", "Alpha leads the team."))
        rel = await relation_row(conn, "Alpha", "Mid")
        assert _embedded(rel, relation_embedding_text("ALPHA", "Mid", "employment", "Alpha works at Mid."))
        assert await entity_provenance(conn, "Alpha") == ["c1", "c3"]


# ----- delete -----


async def test_delete_entity_cascades_relations_and_provenance(seeded):
    response = await seeded.http.delete("/entities/alpha")
    assert response.status_code == 200
    assert response.json() == {"name": "Alpha", "relations_deleted": 2}
    async with seeded.container.db.connect() as conn:
        assert await entity_row(conn, "Alpha") is None
        assert await entity_provenance(conn, "Alpha") == []
        assert await relation_provenance(conn, "Alpha", "Zed") == []
        assert await count(conn, entity_sources) == 3  # Mid c1, Zed c2, Beta Corp c3 (Alpha had two)
        assert await count(conn, relation_sources) == 1  # only Mid-Zed left
        assert (await entity_row(conn, "Mid"))["degree"] == 1
    assert (await seeded.http.delete("/entities/alpha")).status_code == 404


# ----- relations -----


async def test_list_relations_filtered_by_entity(seeded):
    http = seeded.http
    everything = (await http.get("/relations")).json()
    assert everything["total"] == 3
    assert everything["relations"][0]["weight"] == 2.0
    zed = (await http.get("/relations", params={"entity": "ZED"})).json()
    assert zed["total"] == 2
    assert {(r["source"], r["target"]) for r in zed["relations"]} == {("Alpha", "Zed"), ("Mid", "Zed")}
    assert (await http.get("/relations", params={"entity": "Nobody"})).status_code == 404


async def test_create_edit_delete_relation_in_either_order(seeded):
    http = seeded.http
    created = await http.post(
        "/relations",
        json={
            "source": "Zed",
            "target": "Beta Corp",
            "description": "Plant.",
            "keywords": ["factory", " industry", "factory"],
            "weight": 3,
        },
    )
    assert created.status_code == 201
    body = created.json()
    assert (body["source"], body["target"]) == ("Beta Corp", "Zed")
    assert body["keywords"] == "factory,industry" and body["weight"] == 3.0
    async with seeded.container.db.connect() as conn:
        row = await relation_row(conn, "Zed", "Beta Corp")
        assert _embedded(row, relation_embedding_text("Beta Corp", "Zed", "factory,industry", "Plant."))
        assert (await entity_row(conn, "Beta Corp"))["degree"] == 1

    edited = await http.patch(
        "/relations", json={"source": "beta corp", "target": "zed", "keywords": "plant, factory", "weight": 0.5}
    )
    assert edited.status_code == 200
    assert edited.json()["keywords"] == "factory,plant" and edited.json()["description"] == "Plant."
    async with seeded.container.db.connect() as conn:
        row = await relation_row(conn, "Zed", "Beta Corp")
        assert _embedded(row, relation_embedding_text("Beta Corp", "Zed", "factory,plant", "Plant."))

    deleted = await http.delete("/relations", params={"source": "Zed", "target": "Beta Corp"})
    assert deleted.status_code == 200 and deleted.json() == {"source": "Beta Corp", "target": "Zed"}
    async with seeded.container.db.connect() as conn:
        assert await relation_row(conn, "Zed", "Beta Corp") is None
        assert (await entity_row(conn, "Beta Corp"))["degree"] == 0


async def test_relation_errors(seeded):
    http = seeded.http
    missing = await http.post("/relations", json={"source": "Alpha", "target": "Nobody", "description": "x"})
    assert missing.status_code == 404 and missing.json()["code"] == "entity_not_found"
    selfish = await http.post("/relations", json={"source": "Alpha", "target": " ALPHA", "description": "x"})
    assert selfish.status_code == 422 and selfish.json()["code"] == "self_relation"
    dup = await http.post("/relations", json={"source": "Mid", "target": "Alpha", "description": "x"})
    assert dup.status_code == 409 and dup.json()["code"] == "relation_exists"
    assert (
        await http.post("/relations", json={"source": "Mid", "target": "Zed", "description": "x", "weight": 0})
    ).status_code == 422
    assert (await http.patch("/relations", json={"source": "Mid", "target": "Zed"})).status_code == 422
    nope = await http.patch("/relations", json={"source": "Beta Corp", "target": "Zed", "weight": 2})
    assert nope.status_code == 404 and nope.json()["code"] == "relation_not_found"
    assert (await http.delete("/relations", params={"source": "Beta Corp", "target": "Zed"})).status_code == 404
    assert (await http.delete("/relations", params={"source": "Beta Corp"})).status_code == 422


async def test_projects_are_isolated(seeded):
    http = seeded.http
    await http.post("/projects", json={"id": "other"})
    assert (await http.get("/entities", params={"project_id": "other"})).json()["total"] == 0
    assert (await http.get("/entities/Alpha", params={"project_id": "other"})).status_code == 404
    created = await http.post("/entities", json={"project_id": "other", "name": "Alpha", "description": "Other."})
    assert created.status_code == 201
    assert (await http.get("/entities/Alpha")).json()["description"] == "Alpha leads the team."
