"""Projects API: CRUD, counts, settings overrides, isolation, error shapes."""

from __future__ import annotations

from sqlalchemy import insert

from app.db.tables import documents


async def test_default_project_always_exists(client):
    response = await client.get("/projects/default")
    assert response.status_code == 200
    body = response.json()
    assert body["id"] == "default"
    assert body["counts"] == {"documents": 0, "chunks": 0, "entities": 0, "relations": 0}


async def test_create_get_list_delete(client):
    created = await client.post("/projects", json={"id": "alpha", "name": "Alpha"})
    assert created.status_code == 201
    assert created.json()["name"] == "Alpha"

    listed = await client.get("/projects")
    assert [p["id"] for p in listed.json()["projects"]] == ["alpha", "default"]

    deleted = await client.delete("/projects/alpha")
    assert deleted.status_code == 204
    assert (await client.get("/projects/alpha")).status_code == 404


async def test_duplicate_project_is_409_with_error_shape(client):
    await client.post("/projects", json={"id": "dup"})
    response = await client.post("/projects", json={"id": "dup"})
    assert response.status_code == 409
    assert response.json() == {"detail": "Project 'dup' already exists", "code": "project_exists"}


async def test_unknown_project_is_404_with_error_shape(client):
    response = await client.get("/projects/missing")
    assert response.status_code == 404
    assert response.json()["code"] == "project_not_found"
    assert (await client.delete("/projects/missing")).status_code == 404


async def test_invalid_ids_and_settings_are_422(client):
    for bad in ["Upper", "-leading", "a" * 64, "sp ace", ""]:
        response = await client.post("/projects", json={"id": bad})
        assert response.status_code == 422, bad
        assert response.json()["code"] == "validation_error"
    bad_settings = {"id": "x", "settings": {"chunk_size": 100, "chunk_overlap_size": 100}}
    assert (await client.post("/projects", json=bad_settings)).status_code == 422
    assert (await client.post("/projects", json={"id": "y", "settings": {"nope": 1}})).status_code == 422
    assert (
        await client.post("/projects", content=b"{not json", headers={"content-type": "application/json"})
    ).status_code == 422


async def test_settings_overrides_are_stored_and_effective(client):
    body = {"id": "tuned", "settings": {"chunk_size": 600, "language": "French", "entity_types": ["Gene", "Drug"]}}
    created = (await client.post("/projects", json=body)).json()
    assert created["settings"]["chunk_size"] == 600
    effective = created["effective_settings"]
    assert effective["chunk_size"] == 600
    assert effective["language"] == "French"
    assert effective["entity_types"] == ["Gene", "Drug"]
    assert effective["chunk_overlap_size"] == 100  # inherited default
    assert effective["max_gleaning"] == 1

    patched = await client.patch("/projects/tuned", json={"settings": {"max_gleaning": 0}})
    assert patched.status_code == 200
    assert patched.json()["effective_settings"]["max_gleaning"] == 0
    assert patched.json()["effective_settings"]["chunk_size"] == 1200  # override replaced as a whole


async def test_counts_and_isolation(app_client, client):
    await client.post("/projects", json={"id": "one"})
    await client.post("/projects", json={"id": "two"})
    async with app_client.container.db.transaction() as conn:
        await conn.execute(
            insert(documents).values(
                project_id="one", id="doc-1", status="processed", content="hello", content_hash="h", content_length=5
            )
        )
    one = (await client.get("/projects/one")).json()
    two = (await client.get("/projects/two")).json()
    assert one["counts"]["documents"] == 1
    assert two["counts"]["documents"] == 0

    assert (await client.delete("/projects/one")).status_code == 204
    assert (await client.get("/projects/two")).status_code == 200


async def test_deleting_default_empties_it_but_keeps_it(app_client, client):
    async with app_client.container.db.transaction() as conn:
        await conn.execute(
            insert(documents).values(
                project_id="default",
                id="doc-1",
                status="processed",
                content="hello",
                content_hash="h",
                content_length=5,
            )
        )
    assert (await client.delete("/projects/default")).status_code == 204
    body = (await client.get("/projects/default")).json()
    assert body["counts"]["documents"] == 0
