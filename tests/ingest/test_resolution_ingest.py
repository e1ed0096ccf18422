"""Entity resolution through the real pipeline: aliases merge into one node across documents and under
concurrency, off and suggest modes, deletion and re-ingestion, and confusable names kept apart."""

from __future__ import annotations

import asyncio

from sqlalchemy import select

from app.db.tables import entities, entity_aliases, entity_suggestions, relations
from tests.ingest.test_pipeline import entity_line, ingest, relation_line, rows
from tests.support.fakes.openai_server import COMPLETE, chunk_text

RECORDS = {
    "doc one": [
        entity_line("Acme Holdings Ltd.", "organization", "Acme builds bridges."),
        entity_line("Dr. Mira Tolven", "person", "Mira Tolven leads Acme research."),
        entity_line("Tolven", "person", "Tolven wrote the report."),
        relation_line("Dr. Mira Tolven", "Acme Holdings Ltd.", "works at", "Tolven works at Acme."),
    ],
    "doc two": [
        entity_line("ACME HOLDINGS", "organization", "Acme owns a quarry."),
        entity_line("Mira Tolven", "person", "Mira Tolven visited the quarry."),
        relation_line("Tolven", "ACME HOLDINGS", "visits", "Tolven visits Acme."),
    ],
    "doc three": [
        entity_line("Draqua Energy", "organization", "Draqua Energy sells power."),
        entity_line("Draqua Energies Group", "organization", "A holding of energy firms."),
        entity_line("Jon Tolven", "person", "Jon Tolven is a pilot."),
        entity_line("Tolven", "person", "Tolven flies."),
    ],
}


def install(fake_llm, records: dict[str, list[str]] = RECORDS) -> None:
    """Each chunk's extraction answers with the records of the first marker (a key of `records`) it contains."""

    def extract(messages) -> str:
        text = chunk_text(messages)
        return "\n".join(next(v for k, v in records.items() if k in text) + [COMPLETE])

    fake_llm.handlers["extract"] = extract


async def graph(app) -> tuple[set[str], set[tuple[str, str]]]:
    keys = {r["key"] for r in await rows(app, select(entities.c.key))}
    pairs = {(r["src_key"], r["tgt_key"]) for r in await rows(app, select(relations.c.src_key, relations.c.tgt_key))}
    return keys, pairs


async def test_aliases_merge_into_one_node_across_documents(make_settings, start_app, fake_llm):
    app = await start_app(make_settings())
    install(fake_llm)
    await ingest(app, ["doc one"])
    await ingest(app, ["doc two"])
    keys, pairs = await graph(app)
    assert keys == {"acme holdings ltd.", "dr. mira tolven"}
    assert pairs == {("acme holdings ltd.", "dr. mira tolven")}
    aliases = {r["alias_key"]: (r["entity_key"], r["source"]) for r in await rows(app, select(entity_aliases))}
    assert aliases["acme holdings"] == ("acme holdings ltd.", "rule")
    assert aliases["mira tolven"][0] == "dr. mira tolven"
    # "Tolven" alone resolved only inside each document that named Mira Tolven (scoped aliases)
    assert {k.split("\x1f")[0] for k, (_, s) in aliases.items() if s == "partial"} == {"tolven"}


async def test_confusable_names_and_shared_surnames_stay_apart(make_settings, start_app, fake_llm):
    app = await start_app(make_settings())
    install(fake_llm)
    await ingest(app, ["doc one"])
    await ingest(app, ["doc three"])
    keys, _ = await graph(app)
    assert {"draqua energy", "draqua energies group", "jon tolven", "dr. mira tolven"} <= keys
    # doc three's "Tolven" is Jon Tolven, in that document only; never Mira from doc one
    jon = (await rows(app, select(entities.c.description).where(entities.c.key == "jon tolven")))[0]
    mira = (await rows(app, select(entities.c.description).where(entities.c.key == "dr. mira tolven")))[0]
    assert "Tolven flies." in jon["description"] and "Tolven flies." not in mira["description"]


async def test_off_mode_keeps_forms_apart(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(entity_resolution="off"))
    install(fake_llm)
    await ingest(app, ["doc one"])
    await ingest(app, ["doc two"])
    keys, _ = await graph(app)
    assert {"acme holdings ltd.", "acme holdings", "dr. mira tolven", "mira tolven", "tolven"} <= keys
    assert await rows(app, select(entity_aliases)) == []


async def test_suggest_mode_records_pairs_without_merging(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(entity_resolution="suggest"))
    install(fake_llm)
    await ingest(app, ["doc one"])
    await ingest(app, ["doc two"])
    keys, _ = await graph(app)
    assert {"acme holdings ltd.", "acme holdings", "dr. mira tolven", "mira tolven"} <= keys
    pairs = {(r["key_a"], r["key_b"]) for r in await rows(app, select(entity_suggestions))}
    assert ("acme holdings", "acme holdings ltd.") in pairs and ("dr. mira tolven", "mira tolven") in pairs


async def test_concurrent_documents_with_aliases_end_with_one_node(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(max_parallel_insert=4))
    forms = ["Acme Holdings Ltd.", "ACME Holdings", "Acme Holdings, Inc.", "acme holdings"]
    texts = {f"form {i}": f for i, f in enumerate(forms)}
    fake_llm.latency = 0.02

    def extract(messages) -> str:
        text = chunk_text(messages)
        name = next(f for k, f in texts.items() if k in text)
        return "\n".join([entity_line(name, "organization", f"{name} in {text}."), COMPLETE])

    fake_llm.handlers["extract"] = extract
    await asyncio.gather(*(ingest(app, [t]) for t in texts))
    keys, _ = await graph(app)
    assert len(keys) == 1


async def test_delete_and_reingest_end_with_the_same_nodes(make_settings, start_app, fake_llm):
    app = await start_app(make_settings())
    install(fake_llm)
    [one] = await ingest(app, ["doc one"])
    await ingest(app, ["doc two"])
    before = await graph(app)
    response = await app.http.delete(f"/documents/{one['id']}")
    assert response.status_code == 200, response.text
    keys, _ = await graph(app)
    assert keys == {"acme holdings ltd.", "dr. mira tolven"}  # doc two's records kept their resolution
    await ingest(app, ["doc one"])
    assert await graph(app) == before


async def test_a_detached_alias_is_not_resolved_again_by_later_documents(make_settings, start_app, fake_llm):
    app = await start_app(make_settings())
    install(fake_llm)
    await ingest(app, ["doc one"])
    await ingest(app, ["doc two"])
    assert "acme holdings" not in (await graph(app))[0]
    detached = await app.http.post("/entities/Acme Holdings Ltd./aliases/detach", json={"alias": "ACME HOLDINGS"})
    assert detached.status_code == 200, detached.text
    RECORDS["doc four"] = [entity_line("ACME HOLDINGS", "organization", "A different Acme, a shipping line.")]
    try:
        await ingest(app, ["doc four"])
    finally:
        del RECORDS["doc four"]
    keys, _ = await graph(app)
    assert {"acme holdings", "acme holdings ltd."} <= keys
    other = (await rows(app, select(entities.c.description).where(entities.c.key == "acme holdings")))[0]
    assert "shipping line" in other["description"]
