"""GET /entities/duplicates and POST /entities/duplicates/reject: same-type embedding neighbours and stored
resolution suggestions with their evidence, rejected pairs never listed again, accepting by merging."""

from __future__ import annotations

import pytest

from app.domain.aliases import SuggestionItem
from app.domain.names import entity_key
from app.repositories import aliases as alias_repo

SHIPS = "builds cargo ships and ferries in the northern harbour of Port Halden since 1921."


async def _entity(app, name: str, entity_type: str, description: str) -> None:
    response = await app.http.post(
        "/entities", json={"name": name, "entity_type": entity_type, "description": description}
    )
    assert response.status_code == 201, response.text


@pytest.fixture
async def world(app_client):
    app = app_client
    await _entity(app, "Acme Holdings", "organization", f"Acme Holdings {SHIPS}")
    await _entity(app, "Acme Holdings Ltd", "organization", f"Acme Holdings Ltd {SHIPS}")
    await _entity(app, "Acme Holdings Yard", "location", f"Acme Holdings {SHIPS}")  # alike, another type
    await _entity(app, "Draqua Energy", "organization", "Draqua Energy sells wind power to farmers.")
    await _entity(app, "Port Halden", "location", "A harbour town.")
    for name in ("Acme Holdings", "Acme Holdings Ltd"):
        response = await app.http.post(
            "/relations", json={"source": name, "target": "Port Halden", "description": f"{name} is in Port Halden."}
        )
        assert response.status_code == 201, response.text
    return app


async def _pairs(app, **params) -> dict:
    response = await app.http.get("/entities/duplicates", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def _names(listing: dict) -> list[set[str]]:
    return [{p["entity_a"], p["entity_b"]} for p in listing["pairs"]]


async def test_same_type_similar_entities_are_listed_with_evidence(world):
    listing = await _pairs(world)
    assert listing["threshold"] == world.container.settings.entity_similarity_threshold
    assert _names(listing) == [{"Acme Holdings", "Acme Holdings Ltd"}]  # never the location, never Draqua
    [pair] = listing["pairs"]
    assert pair["found_by"] == ["similarity"]
    assert listing["threshold"] <= pair["score"] <= 1.0
    assert pair["entity_type_a"] == pair["entity_type_b"] == "organization"
    assert pair["shared_neighbours"] == ["Port Halden"]
    assert 0.8 < pair["name_similarity"] < 1.0
    evidence = "\n".join(pair["evidence"])
    assert "embeddings" in evidence and "names" in evidence and "1 shared neighbour: Port Halden" in evidence

    loose = await _pairs(world, threshold=0.0)  # every same-type neighbour not pointing away
    assert len(loose["pairs"]) >= 2
    assert all(p["entity_type_a"] == p["entity_type_b"] for p in loose["pairs"])
    assert [p["score"] for p in loose["pairs"]] == sorted((p["score"] for p in loose["pairs"]), reverse=True)
    page = await _pairs(world, threshold=0.0, limit=1, offset=1)
    assert page["total"] == loose["total"] >= 2 and _names(page) == _names(loose)[1:2]
    assert (await _pairs(world, threshold=1.0))["pairs"] == []


async def test_stored_suggestions_are_listed_until_an_entity_goes(world):
    async with world.container.db.transaction() as conn:
        await alias_repo.add_suggestions(
            conn,
            "default",
            [
                SuggestionItem(
                    entity_key("Draqua Energy"), entity_key("Acme Holdings Ltd"), 0.97, "acronym initials match"
                )
            ],
        )
    listing = await _pairs(world)
    top = listing["pairs"][0]
    assert {top["entity_a"], top["entity_b"]} == {"Draqua Energy", "Acme Holdings Ltd"}
    assert top["found_by"] == ["resolution"] and top["score"] == 0.97
    assert top["evidence"][0] == "acronym initials match"
    assert (await world.http.delete("/entities/Draqua Energy")).status_code == 200
    assert _names(await _pairs(world)) == [{"Acme Holdings", "Acme Holdings Ltd"}]


async def test_a_rejected_pair_is_never_suggested_again(world):
    async with world.container.db.transaction() as conn:
        await alias_repo.add_suggestions(
            conn,
            "default",
            [SuggestionItem(entity_key("Acme Holdings"), entity_key("Acme Holdings Ltd"), 0.9, "legal suffix")],
        )
    assert (await _pairs(world))["pairs"][0]["found_by"] == ["resolution", "similarity"]
    rejected = await world.http.post(
        "/entities/duplicates/reject", json={"entity_a": "acme holdings ltd", "entity_b": "Acme Holdings"}
    )
    assert rejected.status_code == 200, rejected.text
    assert rejected.json() == {"entity_a": "Acme Holdings Ltd", "entity_b": "Acme Holdings", "rejected": True}
    assert (await _pairs(world))["pairs"] == []
    assert {"Acme Holdings", "Acme Holdings Ltd"} not in _names(await _pairs(world, threshold=0.0))
    again = await world.http.post(
        "/entities/duplicates/reject", json={"entity_a": "Acme Holdings", "entity_b": "Acme Holdings Ltd"}
    )
    assert again.status_code == 200
    async with world.container.db.transaction() as conn:  # ingest-time resolution cannot bring it back
        await alias_repo.add_suggestions(
            conn,
            "default",
            [SuggestionItem(entity_key("Acme Holdings"), entity_key("Acme Holdings Ltd"), 0.99, "again")],
        )
    assert (await _pairs(world))["pairs"] == []


async def test_reject_errors(world):
    same = await world.http.post(
        "/entities/duplicates/reject", json={"entity_a": "Acme Holdings", "entity_b": "ACME HOLDINGS"}
    )
    assert same.status_code == 422 and same.json()["code"] == "same_entity"
    missing = await world.http.post(
        "/entities/duplicates/reject", json={"entity_a": "Acme Holdings", "entity_b": "Nobody"}
    )
    assert missing.status_code == 404 and missing.json()["code"] == "entity_not_found"
    extra = await world.http.post("/entities/duplicates/reject", json={"entity_a": "A", "entity_b": "B", "why": "x"})
    assert extra.status_code == 422
    unknown = await world.http.post(
        "/entities/duplicates/reject", json={"project_id": "nope", "entity_a": "A", "entity_b": "B"}
    )
    assert unknown.status_code == 404 and unknown.json()["code"] == "project_not_found"
    bad = await world.http.get("/entities/duplicates", params={"threshold": 1.5})
    assert bad.status_code == 422
    assert (await world.http.get("/entities/duplicates", params={"project_id": "nope"})).status_code == 404


async def test_accepting_a_pair_is_a_merge_that_leaves_an_alias(world):
    merged = await world.http.post(
        "/entities/merge", json={"source_entities": ["Acme Holdings Ltd"], "target_entity": "Acme Holdings"}
    )
    assert merged.status_code == 200, merged.text
    assert (await _pairs(world))["pairs"] == []
    target = (await world.http.get("/entities/Acme Holdings Ltd")).json()
    assert target["name"] == "Acme Holdings" and target["aliases"] == ["Acme Holdings Ltd"]


async def test_an_entity_named_duplicates_is_still_listed(app_client):
    await _entity(app_client, "Duplicates", "concept", "A word.")
    assert (await _pairs(app_client))["pairs"] == []
    found = (await app_client.http.get("/entities", params={"q": "duplicates"})).json()["entities"]
    assert [e["name"] for e in found] == ["Duplicates"]
