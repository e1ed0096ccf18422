"""Deletion rebuilds read the parsed records stored with each chunk (migration 0008) instead of parsing the
cached extraction answers again; chunks without usable stored records still rebuild from the cached answers
(and get their records stored). Never an extraction call. Fake LLM, real pipeline and database."""

from __future__ import annotations

import pytest
from sqlalchemy import select, update

from app.db.tables import chunks, llm_cache
from app.domain.chunk_records import as_merged, decode, encode, parse_fingerprint
from app.domain.records import ChunkExtraction, EntityRecord, RelationRecord
from app.services.deletion import rebuild_inputs
from app.services.ingest.extraction import extraction_from_cached
from tests.graph.test_deletion import OVERLAPPING, graph_state, ingest, query

FP = parse_fingerprint(["person", "place"], 500)


def _sample() -> ChunkExtraction:
    return ChunkExtraction(
        chunk_id="c1",
        entities=[
            EntityRecord(name="Alice", key="alice", entity_type="person", description="Alice paints.", chunk_id="c1"),
        ],
        relations=[
            RelationRecord(
                src_name="Alice",
                tgt_name="Paris",
                src_key="alice",
                tgt_key="paris",
                keywords=["lives"],
                description="Alice lives in Paris.",
                weight=2.0,
                chunk_id="c1",
            ),
        ],
    )


def test_records_round_trip_with_the_chunk_identity_of_the_reader():
    stored = encode(_sample(), ["k1", "k2"], FP)
    back = decode(stored, "c9", "a.txt", ["k1", "k2"], FP)
    assert back is not None
    assert [(e.name, e.key, e.entity_type, e.description, e.chunk_id, e.file_path) for e in back.entities] == [
        ("Alice", "alice", "person", "Alice paints.", "c9", "a.txt")
    ]
    [r] = back.relations
    assert (r.src_key, r.tgt_key, r.keywords, r.description, r.weight, r.chunk_id) == (
        "alice",
        "paris",
        ["lives"],
        "Alice lives in Paris.",
        2.0,
        "c9",
    )


@pytest.mark.parametrize(
    "stored, keys, fingerprint",
    [
        (None, ["k1"], FP),
        ("not a mapping", ["k1"], FP),
        ({"fp": FP, "keys": ["k1"], "e": [["only", "two"]], "r": []}, ["k1"], FP),  # malformed record
        ("sample", ["k1", "k3"], FP),  # the chunk was re-extracted
        ("sample", ["k1"], parse_fingerprint(["person"], 500)),  # other entity types now
        ("sample", ["k1"], parse_fingerprint(["person", "place"], 40)),  # other name limit now
    ],
)
def test_unusable_stored_records_are_ignored(stored, keys, fingerprint):
    if stored == "sample":
        stored = encode(_sample(), ["k1"], FP)
    assert decode(stored, "c1", None, keys, fingerprint) is None


def test_records_as_merged_are_read_whatever_the_parse_inputs_are_now():
    stored = encode(_sample(), ["k1"], parse_fingerprint(["person"], 40))  # parsed with other inputs than now
    back = as_merged(stored, "c9", None)
    assert back is not None and [e.key for e in back.entities] == ["alice"] and back.relations[0].chunk_id == "c9"
    assert as_merged(None, "c9", None) is None
    assert as_merged({"fp": FP, "keys": "k1", "e": [], "r": []}, "c9", None) is None


def test_fingerprint_tells_default_types_from_configured_ones():
    assert parse_fingerprint(None, 500) != parse_fingerprint([], 500) != parse_fingerprint(["a"], 500)


@pytest.fixture
def parses(monkeypatch):
    """The chunks whose cached answers a deletion parses again."""
    parsed: list[str] = []

    def counting(answers, chunk_id, *args):
        parsed.append(chunk_id)
        return extraction_from_cached(answers, chunk_id, *args)

    monkeypatch.setattr(rebuild_inputs, "extraction_from_cached", counting)
    return parsed


async def _stored(app) -> dict[str, dict | None]:
    rows = await query(app, select(chunks.c.id, chunks.c.extraction_records, chunks.c.extraction_cache_keys))
    return {r["id"]: r for r in rows}


async def test_ingestion_stores_what_parsing_the_cached_answers_gives(app_client):
    app = app_client
    await ingest(app, OVERLAPPING[1])
    [row] = (await _stored(app)).values()
    cached = {r["key"]: r["response"] for r in await query(app, select(llm_cache.c.key, llm_cache.c.response))}
    types = app.container.settings.entity_types
    fingerprint = parse_fingerprint(types, app.container.settings.entity_name_max_length)
    keys = row["extraction_cache_keys"]
    stored = decode(row["extraction_records"], row["id"], "x.txt", keys, fingerprint)
    parsed = extraction_from_cached(
        [cached[k] for k in keys], row["id"], "x.txt", app.container.settings.entity_name_max_length, types
    )
    assert stored is not None and stored.entities and stored.relations
    assert stored.entities == parsed.entities and stored.relations == parsed.relations


async def _rebuilt_equals_fresh(app, fake_llm, texts: list[str], deleted: list[str]) -> None:
    fake_llm.calls.clear()
    response = await app.http.post("/documents/delete", json={"document_ids": deleted})
    assert response.status_code == 200, response.text
    assert response.json()["llm_calls"]["extract"] == 0 and not fake_llm.calls_of("extract")
    await app.http.post("/projects", json={"id": "fresh"})
    for text in texts:
        await ingest(app, text, project_id="fresh")
    rebuilt, fresh = await graph_state(app), await graph_state(app, "fresh")
    for part in ("entities", "relations", "entity_sources", "relation_sources"):
        assert rebuilt[part] == fresh[part], part


async def test_rebuild_reads_stored_records_and_parses_nothing(app_client, fake_llm, parses):
    app = app_client
    ids = [await ingest(app, text) for text in OVERLAPPING]
    await _rebuilt_equals_fresh(app, fake_llm, [OVERLAPPING[0], OVERLAPPING[2]], [ids[1], ids[3]])
    assert parses == []


async def test_the_stored_records_are_what_the_rebuild_uses(app_client, parses):
    """A stored description that differs from the cached answer shows up in the rebuilt entity."""
    app = app_client
    ids = [await ingest(app, text) for text in OVERLAPPING[:3]]
    rows = await _stored(app)
    kept = f"{ids[2]}-chunk-000"
    records = rows[kept]["extraction_records"]
    for entity in records["e"]:
        if entity[1] == "paris":
            entity[3] = "Paris, as stored."
    async with app.container.db.transaction() as conn:
        await conn.execute(update(chunks).where(chunks.c.id == kept).values(extraction_records=records))
    assert (await app.http.delete(f"/documents/{ids[0]}")).status_code == 200
    paris = (await app.http.get("/entities/Paris")).json()
    assert paris["description"] == "Paris, as stored." and parses == []


async def test_chunks_from_before_the_migration_rebuild_from_the_cache_and_keep_their_records(
    app_client, fake_llm, parses
):
    app = app_client
    ids = [await ingest(app, text) for text in OVERLAPPING]
    async with app.container.db.transaction() as conn:
        await conn.execute(update(chunks).values(extraction_records=None))
    await _rebuilt_equals_fresh(app, fake_llm, [OVERLAPPING[0], OVERLAPPING[2]], [ids[1], ids[3]])
    assert sorted(parses) == sorted({f"{ids[0]}-chunk-000", f"{ids[2]}-chunk-000"})
    rows = await _stored(app)
    fingerprint = parse_fingerprint(app.container.settings.entity_types, app.container.settings.entity_name_max_length)
    for row in rows.values():  # parsed once, stored for the next deletion
        assert decode(row["extraction_records"], row["id"], None, row["extraction_cache_keys"], fingerprint)


async def test_records_stored_with_other_parse_inputs_are_parsed_again(app_client, fake_llm, parses):
    app = app_client
    ids = [await ingest(app, text) for text in OVERLAPPING[:3]]
    async with app.container.db.transaction() as conn:
        rows = (await conn.execute(select(chunks.c.id, chunks.c.extraction_records))).mappings().all()
        for row in rows:  # as an older parser version would have stored them
            await conn.execute(
                update(chunks)
                .where(chunks.c.id == row["id"])
                .values(extraction_records={**row["extraction_records"], "fp": "0:500:old"})
            )
    await _rebuilt_equals_fresh(app, fake_llm, OVERLAPPING[1:3], [ids[0]])
    assert sorted(parses) == sorted({f"{ids[1]}-chunk-000", f"{ids[2]}-chunk-000"})
