"""The ledger of automatic merges over the API and their undoing: an automatic merge (at ingest time, or
retroactive) is listed with its evidence; unmerge restores the absorbed name as a node of its own, rebuilt
from the cached extraction records (its own sources, description and relations; no extraction call); the
pair then stays apart when a later document names both; accept / reject of an entry; bad input is a 4xx."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import select

from app.db.tables import entities, entity_aliases, entity_rejections, entity_sources, relation_sources
from tests.ingest.test_pipeline import entity_line, ingest, relation_line, rows
from tests.ingest.test_resolution_ingest import graph, install

RECORDS = {
    "first doc": [
        entity_line("Ngozi Okafor", "person", "Ngozi Okafor appears in the first report."),
        entity_line("Marta Quell", "person", "Marta Quell is an archivist."),
        relation_line("Ngozi Okafor", "Marta Quell", "archive", "Marta Quell filed papers on Ngozi Okafor."),
    ],
    "second doc": [
        entity_line("Dr. Okafor", "person", "Dr. Okafor appears in the second report."),
        entity_line("Harbour Office", "organization", "The Harbour Office keeps records."),
        relation_line("Dr. Okafor", "Harbour Office", "records", "The Harbour Office cites Dr. Okafor."),
    ],
    "third doc": [
        entity_line("Ngozi Okafor", "person", "Ngozi Okafor appears in the third report."),
        entity_line("Dr. Okafor", "person", "Dr. Okafor is cited in the third report."),
    ],
}


async def _merged(app, fake_llm, reverse: bool) -> dict[str, dict]:
    install(fake_llm, RECORDS)
    docs = {}
    for marker in ["second doc", "first doc"] if reverse else ["first doc", "second doc"]:
        [docs[marker]] = await ingest(app, [marker], file_path=f"{marker.replace(' ', '-')}.txt")
    keys, _ = await graph(app)
    assert "dr. okafor" not in keys and "ngozi okafor" in keys
    return docs


async def _sources(app, key: str) -> set[str]:
    found = await rows(app, select(entity_sources.c.document_id).where(entity_sources.c.entity_key == key))
    return {r["document_id"] for r in found}


@pytest.mark.parametrize("reverse", [False, True], ids=["at ingest", "retroactive"])
async def test_unmerge_restores_both_nodes_from_cached_records_and_keeps_them_apart(
    make_settings, start_app, fake_llm, reverse
):
    app = await start_app(make_settings())
    docs = await _merged(app, fake_llm, reverse)

    listed = (await app.http.get("/entities/merges")).json()
    assert listed["total"] == 1
    [entry] = listed["entries"]
    assert entry["entity"] == "Ngozi Okafor" and entry["absorbed"] == ["Dr. Okafor"]
    assert entry["rule"] == "partial" and entry["by"] == "rule" and entry["evidence"]
    causing = docs["first doc"] if reverse else docs["second doc"]
    assert entry["document_id"] == causing["id"] and entry["file_name"] == causing["file_path"]
    assert entry["retroactive"] is reverse and entry["status"] == "standing" and entry["undone_at"] is None
    assert (await app.http.get("/entities/Ngozi Okafor/merges")).json()["entries"] == [entry]
    assert (await app.http.get("/entities/merges", params={"rule": "acronym"})).json()["total"] == 0
    filtered = await app.http.get("/entities/merges", params={"document_id": causing["id"], "entity": "Dr. Okafor"})
    assert filtered.json()["entries"] == [entry]

    calls = len(fake_llm.calls)
    response = await app.http.post("/entities/Ngozi Okafor/unmerge", json={})
    assert response.status_code == 200, response.text
    report = response.json()
    assert report["restored"] == ["Dr. Okafor"] and report["entries"] == [entry["id"]]
    assert report["llm_calls"]["extract"] == 0
    assert not [c for c in fake_llm.calls[calls:] if c.operation in ("extract", "glean")]

    keys, pairs = await graph(app)
    assert {"ngozi okafor", "dr. okafor", "marta quell", "harbour office"} <= keys
    assert ("dr. okafor", "harbour office") in pairs and ("marta quell", "ngozi okafor") in pairs
    assert ("harbour office", "ngozi okafor") not in pairs
    assert await _sources(app, "dr. okafor") == {docs["second doc"]["id"]}
    assert await _sources(app, "ngozi okafor") == {docs["first doc"]["id"]}
    moved = await rows(app, select(relation_sources.c.document_id).where(relation_sources.c.src_key == "dr. okafor"))
    assert {r["document_id"] for r in moved} == {docs["second doc"]["id"]}
    described = {
        r["key"]: r for r in await rows(app, select(entities).where(entities.c.key.in_(["dr. okafor", "ngozi okafor"])))
    }
    assert "second report" in described["dr. okafor"]["description"]
    assert "first report" not in described["dr. okafor"]["description"]
    assert "second report" not in described["ngozi okafor"]["description"]
    assert described["dr. okafor"]["name"] == "Dr. Okafor" and described["dr. okafor"]["degree"] == 1
    assert described["ngozi okafor"]["degree"] == 1
    assert "second-doc.txt" not in described["ngozi okafor"]["file_paths"]
    assert not await rows(app, select(entity_aliases).where(entity_aliases.c.alias_key.startswith("dr. okafor")))
    [undone] = (await app.http.get("/entities/merges")).json()["entries"]
    assert undone["status"] == "undone" and undone["undone_at"]

    # a later document naming both keeps them apart: the unmerge recorded the pair as distinct
    await ingest(app, ["third doc"])
    keys, _ = await graph(app)
    assert {"ngozi okafor", "dr. okafor"} <= keys
    assert (await app.http.get("/entities/merges")).json()["total"] == 1
    again = await app.http.post("/entities/Ngozi Okafor/unmerge", json={})
    assert again.status_code == 409 and again.json()["code"] == "no_automatic_merge"


async def test_reject_and_accept_ledger_entries(make_settings, start_app, fake_llm):
    app = await start_app(make_settings())
    await _merged(app, fake_llm, reverse=False)
    [entry] = (await app.http.get("/entities/merges")).json()["entries"]

    accepted = await app.http.post(f"/entities/merges/{entry['id']}/accept", json={})
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["status"] == "confirmed" and accepted.json()["confirmed_at"]
    keys, _ = await graph(app)
    assert "dr. okafor" not in keys  # accepting keeps the merge

    rejected = await app.http.post(f"/entities/merges/{entry['id']}/reject", json={})
    assert rejected.status_code == 200, rejected.text
    assert rejected.json()["restored"] == ["Dr. Okafor"]
    [after] = (await app.http.get("/entities/Dr. Okafor/merges")).json()["entries"]
    assert after["status"] == "rejected"
    for action in ("accept", "reject"):
        late = await app.http.post(f"/entities/merges/{entry['id']}/{action}", json={})
        assert late.status_code == 409 and late.json()["code"] == "merge_already_undone", action


async def test_bad_requests_are_4xx_and_change_nothing(make_settings, start_app, fake_llm):
    app = await start_app(make_settings())
    await _merged(app, fake_llm, reverse=False)
    before = await graph(app)
    [entry] = (await app.http.get("/entities/merges")).json()["entries"]
    cases = [
        ("/entities/Nobody/unmerge", {}, 404, "entity_not_found"),
        ("/entities/Ngozi Okafor/unmerge", {"entry_id": 999999}, 404, "merge_entry_not_found"),
        ("/entities/Ngozi Okafor/unmerge", {"names": ["Marta Quell"]}, 409, "no_automatic_merge"),
        ("/entities/Marta Quell/unmerge", {}, 409, "no_automatic_merge"),
        ("/entities/Ngozi Okafor/unmerge", {"names": []}, 422, None),
        ("/entities/Ngozi Okafor/unmerge", {"names": ["Dr. Okafor"], "entry_id": entry["id"]}, 422, None),
        ("/entities/Ngozi Okafor/unmerge", {"entry_id": 0}, 422, None),
        ("/entities/Ngozi Okafor/unmerge", {"entry_id": 2**70}, 422, None),
        ("/entities/Ngozi Okafor/unmerge", {"names": ["x" * 1001]}, 422, None),
        ("/entities/Ngozi Okafor/unmerge", {"names": ["  "]}, 422, None),
        ("/entities/merges/99999999999999999999999/accept", {}, 422, None),
        ("/entities/Ngozi Okafor/unmerge", {"surprise": 1}, 422, None),
        ("/entities/Ngozi Okafor/unmerge", {"project_id": "nowhere"}, 404, "project_not_found"),
        ("/entities/merges/999999/accept", {}, 404, "merge_entry_not_found"),
        ("/entities/merges/0/reject", {}, 422, None),
        ("/entities/merges/abc/accept", {}, 422, None),
    ]
    for path, body, status, code in cases:
        response = await app.http.post(path, json=body)
        assert response.status_code == status, (path, body, response.text)
        if code:
            assert response.json()["code"] == code, (path, body)
    assert (await app.http.post("/entities/Ngozi Okafor/unmerge", content=b"{nope")).status_code == 422
    assert (await app.http.get("/entities/Nobody/merges")).status_code == 404
    assert (await app.http.get("/entities//merges")).status_code in (404, 422)
    assert (await app.http.post("/entities//unmerge", json={})).status_code in (404, 422)
    assert (await app.http.get("/entities/merges", params={"limit": 0})).status_code == 422
    assert await graph(app) == before

    merged = await app.http.post(
        "/entities/merge", json={"source_entities": ["Marta Quell"], "target_entity": "Harbour Office"}
    )
    assert merged.status_code == 200, merged.text
    by_hand = await app.http.post("/entities/Harbour Office/unmerge", json={"names": ["Marta Quell"]})
    assert by_hand.status_code == 409 and "by hand" in by_hand.json()["detail"]


async def test_unmerge_by_the_absorbed_name_in_the_path(make_settings, start_app, fake_llm):
    app = await start_app(make_settings())
    await _merged(app, fake_llm, reverse=True)
    response = await app.http.post("/entities/Dr. Okafor/unmerge", json={"keep_apart": False})
    assert response.status_code == 200, response.text
    assert response.json()["entity"] == "Ngozi Okafor" and response.json()["restored"] == ["Dr. Okafor"]
    assert not await rows(app, select(entity_rejections))  # keep_apart false: resolution may join them again


async def test_restored_descriptions_are_summarised_as_a_rebuild_would(make_settings, start_app, fake_llm):
    """Fragments past the summary threshold are summarised (on the unmerge's own connection: the cache
    lookups never wait for a second pooled connection while the locks are held); still no extraction call."""
    app = await start_app(make_settings(force_llm_summary_on_merge=2))
    records = {
        **RECORDS,
        "zeroth doc": [entity_line("Ngozi Okafor", "person", "Ngozi Okafor chaired the zeroth meeting.")],
    }
    install(fake_llm, records)
    await ingest(app, ["zeroth doc"])
    await ingest(app, ["first doc"])
    await ingest(app, ["second doc"])
    calls = len(fake_llm.calls)
    response = await app.http.post("/entities/Ngozi Okafor/unmerge", json={})
    assert response.status_code == 200, response.text
    assert response.json()["restored"] == ["Dr. Okafor"]
    assert not [c for c in fake_llm.calls[calls:] if c.operation in ("extract", "glean")]
    [row] = await rows(app, select(entities.c.description).where(entities.c.key == "ngozi okafor"))
    assert "second report" not in row["description"]


async def test_unmerge_and_an_ingest_naming_both_at_once(make_settings, start_app, fake_llm):
    """The unmerge and a document naming both names, concurrently: whichever takes the locks first, the
    names end apart and the ledger has nothing standing."""
    app = await start_app(make_settings())
    await _merged(app, fake_llm, reverse=False)
    unmerged, _ = await asyncio.gather(
        app.http.post("/entities/Ngozi Okafor/unmerge", json={}), ingest(app, ["third doc"])
    )
    assert unmerged.status_code == 200, unmerged.text
    keys, _ = await graph(app)
    assert {"ngozi okafor", "dr. okafor"} <= keys
    ledger = (await app.http.get("/entities/merges")).json()["entries"]
    assert ledger and all(e["status"] == "undone" for e in ledger)
    third = await rows(
        app, select(entity_sources.c.entity_key).where(entity_sources.c.entity_key.in_(["dr. okafor", "ngozi okafor"]))
    )
    assert {r["entity_key"] for r in third} == {"dr. okafor", "ngozi okafor"}
