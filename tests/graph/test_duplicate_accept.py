"""POST /entities/duplicates/accept: a suggested pair merged into the entity kept, recorded in the merge ledger
(confirmed, `by: review`) so that the unmerge restores the duplicate from its cached extraction records, as it
restores an automatic merge; errors are 4xx and change nothing."""

from __future__ import annotations

from app.db.tables import entity_aliases, entity_merge_ledger
from tests.ingest.test_pipeline import ingest, rows
from tests.ingest.test_resolution_ingest import graph, install

SUGGESTED = ("Dr. Mira Tolven", "Mira Tolven")


async def _suggested(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(entity_resolution="suggest"))
    install(fake_llm)  # doc one: Dr. Mira Tolven works at Acme; doc two: Mira Tolven visits the quarry
    await ingest(app, ["doc one"])
    await ingest(app, ["doc two"])
    listed = (await app.http.get("/entities/duplicates")).json()["pairs"]
    assert {p["entity_a"] for p in listed} | {p["entity_b"] for p in listed} >= set(SUGGESTED), listed
    return app


async def _accept(app, entity: str, duplicate: str, **extra):
    return await app.http.post("/entities/duplicates/accept", json={"entity": entity, "duplicate": duplicate, **extra})


async def test_an_accepted_suggestion_is_merged_and_recorded_confirmed(make_settings, start_app, fake_llm):
    app = await _suggested(make_settings, start_app, fake_llm)
    accepted = await _accept(app, "Mira Tolven", "Dr. Mira Tolven")
    assert accepted.status_code == 200, accepted.text
    body = accepted.json()
    assert body["merge"]["target"] == "Mira Tolven" and body["merge"]["merged_sources"] == ["Dr. Mira Tolven"]
    entry = body["entry"]
    assert (entry["entity"], entry["absorbed"], entry["by"], entry["status"]) == (
        "Mira Tolven",
        ["Dr. Mira Tolven"],
        "review",
        "confirmed",
    )
    assert entry["evidence"].startswith("accepted from the duplicate suggestions; ")  # and the suggestion's
    assert (await app.http.get("/entities/Dr. Mira Tolven")).json()["name"] == "Mira Tolven"
    listed = (await app.http.get("/entities/duplicates")).json()["pairs"]
    assert not any("Dr. Mira Tolven" in (p["entity_a"], p["entity_b"]) for p in listed)
    ledger = (await app.http.get("/entities/Mira Tolven/merges")).json()["entries"]
    assert [e["id"] for e in ledger] == [entry["id"]]


async def test_undoing_an_accepted_suggestion_restores_the_duplicate_from_its_records(
    make_settings, start_app, fake_llm
):
    app = await _suggested(make_settings, start_app, fake_llm)
    before = await graph(app)
    extractions = len(fake_llm.calls_of("extract"))
    entry = (await _accept(app, "Mira Tolven", "Dr. Mira Tolven")).json()["entry"]
    assert "dr. mira tolven" not in (await graph(app))[0]
    undone = await app.http.post("/entities/Mira Tolven/unmerge", json={"entry_id": entry["id"]})
    assert undone.status_code == 200, undone.text
    assert undone.json()["restored"] == ["Dr. Mira Tolven"]
    assert await graph(app) == before  # the same nodes and relations as before the accept
    assert len(fake_llm.calls_of("extract")) == extractions  # rebuilt from the cached records
    assert (await app.http.get("/entities/Dr. Mira Tolven")).json()["name"] == "Dr. Mira Tolven"
    [row] = await rows(app, entity_merge_ledger.select())
    assert row["outcome"] == "undone"
    listed = (await app.http.get("/entities/duplicates")).json()["pairs"]
    assert not any({p["entity_a"], p["entity_b"]} == set(SUGGESTED) for p in listed)  # kept apart since


async def test_accepting_an_entity_made_by_hand_merges_without_a_ledger_entry(app_client):
    for name in ("Port Halden", "Halden Port"):
        made = await app_client.http.post(
            "/entities", json={"name": name, "entity_type": "location", "description": "A harbour town."}
        )
        assert made.status_code == 201, made.text
    accepted = await _accept(app_client, "Port Halden", "Halden Port")
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["entry"] is None  # nothing an undo could rebuild it from
    assert (await app_client.http.get("/entities/Halden Port")).json()["name"] == "Port Halden"
    assert await rows(app_client, entity_merge_ledger.select()) == []


async def test_accept_errors_change_nothing(make_settings, start_app, fake_llm):
    app = await _suggested(make_settings, start_app, fake_llm)
    before = (await graph(app), await rows(app, entity_aliases.select()))
    same = await _accept(app, "Mira Tolven", "MIRA TOLVEN")
    assert same.status_code == 422 and same.json()["code"] == "same_entity"
    missing = await _accept(app, "Mira Tolven", "Nobody")
    assert missing.status_code == 404 and missing.json()["code"] == "entity_not_found"
    extra = await _accept(app, "Mira Tolven", "Dr. Mira Tolven", why="x")
    assert extra.status_code == 422
    empty = await _accept(app, "", "Dr. Mira Tolven")
    assert empty.status_code == 422
    unknown = await _accept(app, "Mira Tolven", "Dr. Mira Tolven", project_id="nope")
    assert unknown.status_code == 404 and unknown.json()["code"] == "project_not_found"
    assert (await graph(app), await rows(app, entity_aliases.select())) == before
    assert await rows(app, entity_merge_ledger.select()) == []
