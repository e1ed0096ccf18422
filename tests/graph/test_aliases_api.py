"""Aliases in the curation API: merges add them, lookups and curation accept them, manual add and detach,
renames and deletions keep the alias table consistent, and every error is a clear 4xx."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.db.tables import entity_aliases, entity_rejections
from app.domain.names import entity_key
from tests.support.curation import rows, seed_graph

GRAPH = {
    "docs": {"d1": ["c1", "c2"], "d2": ["c3"]},
    "ents": [
        ("Kessara Research Institute", "organization", "An institute for marine research.", ["c1"]),
        ("KRI", "organization", "KRI runs a research vessel.", ["c3"]),
        ("Mira Tolven", "person", "Mira Tolven directs the institute.", ["c1", "c2"]),
        ("Port Halden", "location", "Port Halden is a harbour town.", ["c2"]),
        ("A/B Labs", "organization", "A/B Labs tests things.", ["c2"]),
    ],
    "rels": [
        ("Mira Tolven", "Kessara Research Institute", "Mira Tolven directs it.", "leadership", 1.0, ["c1"]),
        ("KRI", "Port Halden", "KRI is based in Port Halden.", "location", 1.0, ["c3"]),
    ],
}


@pytest.fixture
async def seeded(app_client):
    async with app_client.container.db.transaction() as conn:
        await seed_graph(conn, **GRAPH)
    return app_client


async def _alias_rows(app) -> dict[str, str]:
    async with app.container.db.connect() as conn:
        return {r["alias_key"]: r["entity_key"] for r in await rows(conn, entity_aliases)}


async def _add(app, name: str, alias: str, project_id: str = "default"):
    return await app.http.post(f"/entities/{name}/aliases", json={"project_id": project_id, "alias": alias})


async def _detach(app, name: str, alias: str):
    return await app.http.post(f"/entities/{name}/aliases/detach", json={"alias": alias})


async def test_merge_adds_the_merged_name_as_an_alias_and_lookups_find_it(seeded):
    app = seeded
    merged = await app.http.post(
        "/entities/merge", json={"source_entities": ["KRI"], "target_entity": "Kessara Research Institute"}
    )
    assert merged.status_code == 200, merged.text
    kri = (await app.http.get("/entities/kri")).json()  # any case of the alias
    assert kri["name"] == "Kessara Research Institute" and kri["aliases"] == ["KRI"]
    assert {r["target"] for r in kri["relations"]} | {r["source"] for r in kri["relations"]} >= {"Port Halden"}
    listed = (await app.http.get("/entities", params={"q": "kessara"})).json()["entities"]
    assert listed[0]["aliases"] == ["KRI"]
    assert await _alias_rows(app) == {"kri": "kessara research institute"}
    graph = (await app.http.get("/graph", params={"label": "KRI", "max_depth": 1})).json()
    assert "Kessara Research Institute" in {n["id"] for n in graph["nodes"]}


async def test_merge_repoints_the_aliases_of_merged_entities(seeded):
    app = seeded
    assert (await _add(app, "KRI", "Kessara RI")).status_code == 201
    merged = await app.http.post(
        "/entities/merge", json={"source_entities": ["KRI"], "target_entity": "Kessara Research Institute"}
    )
    assert merged.status_code == 200, merged.text
    target = (await app.http.get("/entities/Kessara RI")).json()
    assert target["name"] == "Kessara Research Institute"
    assert sorted(target["aliases"]) == ["KRI", "Kessara RI"]
    # a source given by its alias is the entity it names
    again = await app.http.post("/entities/merge", json={"source_entities": ["Port Halden"], "target_entity": "KRI"})
    assert again.status_code == 200, again.text
    assert again.json()["target"] == "Kessara Research Institute"
    assert (await app.http.get("/entities/Port Halden")).json()["name"] == "Kessara Research Institute"


async def test_manual_alias_add_lookup_and_conflicts(seeded):
    app = seeded
    added = await _add(app, "Mira Tolven", "Dr. M. Tolven")
    assert added.status_code == 201, added.text
    assert added.json()["name"] == "Mira Tolven" and added.json()["aliases"] == ["Dr. M. Tolven"]
    assert (await _add(app, "Mira Tolven", "dr. m. tolven")).status_code == 201  # again: idempotent
    assert (await app.http.get("/entities/DR. M. TOLVEN")).json()["name"] == "Mira Tolven"

    clash = await _add(app, "Port Halden", "Dr. M. Tolven")
    assert clash.status_code == 409 and clash.json()["code"] == "alias_exists"
    own = await _add(app, "Port Halden", "Mira Tolven")
    assert own.status_code == 409 and own.json()["code"] == "entity_exists"
    itself = await _add(app, "Port Halden", "port halden")
    assert itself.status_code == 409 and itself.json()["code"] == "entity_exists"
    missing = await _add(app, "Nobody", "Somebody")
    assert missing.status_code == 404 and missing.json()["code"] == "entity_not_found"
    assert (
        await _add(
            app,
            "Mira Tolven",
            "",
        )
    ).status_code == 422
    blank = await _add(app, "Mira Tolven", " \t ")
    assert blank.status_code == 422 and blank.json()["code"] == "invalid_entity_name"
    unknown = await _add(app, "Mira Tolven", "X", project_id="nope")
    assert unknown.status_code == 404 and unknown.json()["code"] == "project_not_found"


async def test_an_alias_name_cannot_become_another_entity(seeded):
    app = seeded
    assert (await _add(app, "Mira Tolven", "Tolven")).status_code == 201
    created = await app.http.post("/entities", json={"name": "Tolven", "description": "Someone else."})
    assert created.status_code == 409 and created.json()["code"] == "alias_exists"
    renamed = await app.http.patch("/entities/Port Halden", json={"new_name": "Tolven"})
    assert renamed.status_code == 409 and renamed.json()["code"] == "alias_exists"
    # renaming an entity to one of its own aliases is fine: the alias becomes its name, the old name an alias
    own = await app.http.patch("/entities/Mira Tolven", json={"new_name": "Tolven"})
    assert own.status_code == 200, own.text
    assert own.json()["name"] == "Tolven" and own.json()["aliases"] == ["Mira Tolven"]
    assert await _alias_rows(app) == {"mira tolven": "tolven"}


async def test_detach_alias(seeded):
    app = seeded
    await app.http.post(
        "/entities/merge", json={"source_entities": ["KRI"], "target_entity": "Kessara Research Institute"}
    )
    detached = await _detach(app, "Kessara Research Institute", "kri")
    assert detached.status_code == 200, detached.text
    assert detached.json()["aliases"] == []
    gone = await app.http.get("/entities/KRI")
    assert gone.status_code == 404 and gone.json()["code"] == "entity_not_found"
    async with app.container.db.connect() as conn:
        rejected = (await conn.execute(select(entity_rejections.c.key_a, entity_rejections.c.key_b))).all()
    assert [tuple(r) for r in rejected] == [
        tuple(sorted((entity_key("KRI"), entity_key("Kessara Research Institute"))))
    ]
    again = await _detach(app, "Kessara Research Institute", "KRI")
    assert again.status_code == 404 and again.json()["code"] == "alias_not_found"
    nobody = await _detach(app, "Nobody", "KRI")
    assert nobody.status_code == 404 and nobody.json()["code"] == "entity_not_found"
    # adding it back by hand undoes the rejection
    assert (await _add(app, "Kessara Research Institute", "KRI")).status_code == 201
    async with app.container.db.connect() as conn:
        assert await rows(conn, entity_rejections) == []


async def test_names_with_slashes(seeded):
    app = seeded
    added = await _add(app, "A/B Labs", "A/B")
    assert added.status_code == 201, added.text
    assert (await app.http.get("/entities/A/B")).json()["name"] == "A/B Labs"
    detached = await _detach(app, "A/B", "A/B")  # the entity named by its alias, too
    assert detached.status_code == 200 and detached.json()["aliases"] == []


async def test_curation_accepts_an_alias_wherever_it_takes_an_entity_name(seeded):
    app = seeded
    assert (await _add(app, "Mira Tolven", "Tolven")).status_code == 201
    assert (await _add(app, "Port Halden", "Halden")).status_code == 201

    edited = await app.http.patch("/entities/Tolven", json={"description": "Mira Tolven runs the KRI."})
    assert edited.status_code == 200 and edited.json()["name"] == "Mira Tolven"
    created = await app.http.post(
        "/relations", json={"source": "Tolven", "target": "Halden", "description": "Tolven lives in Halden."}
    )
    assert created.status_code == 201, created.text
    assert {created.json()["source"], created.json()["target"]} == {"Mira Tolven", "Port Halden"}
    listed = (await app.http.get("/relations", params={"entity": "Halden"})).json()
    assert listed["total"] == 2
    updated = await app.http.patch("/relations", json={"source": "Halden", "target": "Tolven", "weight": 3.0})
    assert updated.status_code == 200 and updated.json()["weight"] == 3.0
    self_loop = await app.http.post(
        "/relations", json={"source": "Tolven", "target": "Mira Tolven", "description": "x"}
    )
    assert self_loop.status_code == 422 and self_loop.json()["code"] == "self_relation", self_loop.text
    deleted = await app.http.delete("/relations", params={"source": "Tolven", "target": "Halden"})
    assert deleted.status_code == 200

    renamed = await app.http.patch("/entities/Tolven", json={"new_name": "Mira Tolven-Ashe"})
    assert renamed.status_code == 200 and renamed.json()["aliases"] == ["Tolven", "Mira Tolven"]  # the old name too
    assert (await app.http.get("/entities/Tolven")).json()["name"] == "Mira Tolven-Ashe"
    assert (await _alias_rows(app))["tolven"] == entity_key("Mira Tolven-Ashe")

    removed = await app.http.delete("/entities/Halden")
    assert removed.status_code == 200 and removed.json()["name"] == "Port Halden"
    assert "halden" not in await _alias_rows(app)
    assert (await app.http.get("/entities/Halden")).status_code == 404
