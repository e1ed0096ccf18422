"""Entity resolution through the real pipeline: a name held by an entity of another type ("Orlin", a town,
then "Orlin", a drone) is kept apart under "Orlin (artifact)" and suggested; later documents reach the right
node; deletion rebuilds and re-ingestion keep the split; one document giving two types, a generic type, the
off mode and a user's merge keep one node."""

from __future__ import annotations

from sqlalchemy import select

from app.db.tables import entities, entity_aliases, entity_suggestions
from app.repositories import lexical
from tests.ingest.test_pipeline import entity_line, ingest, relation_line, rows
from tests.ingest.test_resolution_ingest import graph, install

TOWN, DRONE = "orlin", "orlin (artifact)"
RECORDS = {
    "town doc": [
        entity_line("Orlin", "location", "Orlin is a river port."),
        entity_line("Vessa Quay", "location", "A quay."),
        relation_line("Orlin", "Vessa Quay", "harbour", "Vessa Quay lies in Orlin."),
    ],
    "drone doc": [
        entity_line("Orlin", "artifact", "Orlin is a survey drone."),
        entity_line("Kettle Works", "organization", "A drone maker."),
        relation_line("Kettle Works", "Orlin", "builds", "Kettle Works builds the Orlin."),
    ],
    "drone again": [
        entity_line("Orlin", "artifact", "The Orlin drone flies for ten hours."),
        entity_line("Pell Survey", "organization", "A mapping firm."),
        relation_line("Pell Survey", "Orlin", "uses", "Pell Survey flies the Orlin."),
    ],
    "town again": [
        entity_line("Orlin", "location", "Orlin holds a regatta."),
        relation_line("Orlin", "Vessa Quay", "harbour", "The regatta starts at Vessa Quay."),
    ],
    "both types": [
        entity_line("Orlin", "artifact", "Orlin the drone was tested in the port."),
        entity_line("Orlin", "location", "Orlin again, the port."),
    ],
    "generic type": [
        entity_line("Orlin", "unknown", "Orlin is mentioned."),
        entity_line("Orlin", "gadget", "Orlin, a gadget (not a project type: other)."),
    ],
}


async def descriptions(app) -> dict[str, tuple[str, str, str]]:
    return {
        r["key"]: (r["name"], r["entity_type"], r["description"])
        for r in await rows(
            app, select(entities.c.key, entities.c.name, entities.c.entity_type, entities.c.description)
        )
    }


async def test_same_name_other_type_is_kept_apart_and_suggested(make_settings, start_app, fake_llm):
    app = await start_app(make_settings())
    install(fake_llm, RECORDS)
    await ingest(app, ["town doc"])
    [drone] = await ingest(app, ["drone doc"])
    await ingest(app, ["drone again", "town again"])
    found = await descriptions(app)
    assert found[TOWN][:2] == ("Orlin", "location") and found[DRONE][:2] == ("Orlin (artifact)", "artifact")
    assert "river port" in found[TOWN][2] and "regatta" in found[TOWN][2] and "drone" not in found[TOWN][2]
    assert "survey drone" in found[DRONE][2] and "ten hours" in found[DRONE][2] and "port" not in found[DRONE][2]
    _, pairs = await graph(app)
    assert {("kettle works", DRONE), ("orlin (artifact)", "pell survey"), (TOWN, "vessa quay")} <= pairs
    assert not {("kettle works", TOWN), (TOWN, "pell survey")} & pairs
    # the decision is a scoped alias of the bare name, one per document, and a suggested pair
    aliases = {r["alias_key"]: r["entity_key"] for r in await rows(app, select(entity_aliases))}
    assert aliases[f"orlin\x1f{drone['id']}"] == DRONE
    assert sorted(k.split("\x1f")[0] for k, v in aliases.items() if v == DRONE) == ["orlin", "orlin"]
    [suggestion] = await rows(app, select(entity_suggestions))
    assert (suggestion["key_a"], suggestion["key_b"]) == (TOWN, DRONE)
    assert suggestion["evidence"].startswith("same name, other type")
    listed = (await app.http.get("/entities/duplicates")).json()["pairs"]
    assert [{p["entity_a"], p["entity_b"]} for p in listed] == [{"Orlin", "Orlin (artifact)"}]
    bare = await app.http.get("/entities/Orlin")
    assert bare.status_code == 200 and bare.json()["entity_type"] == "location"
    # the keyword "Orlin" names both entities in retrieval, the bare one first
    async with app.container.db.connect() as conn:
        assert [e.key for e in await lexical.named_entities(conn, "default", ["orlin"])] == [TOWN, DRONE]


async def test_one_document_giving_two_types_or_a_generic_type_keeps_one_node(make_settings, start_app, fake_llm):
    app = await start_app(make_settings())
    install(fake_llm, RECORDS)
    await ingest(app, ["town doc"])
    await ingest(app, ["both types"])
    await ingest(app, ["generic type"])
    keys, _ = await graph(app)
    assert TOWN in keys and not any(k.startswith("orlin (") for k in keys)
    assert await rows(app, select(entity_suggestions)) == []


async def test_off_mode_keeps_name_only_keys(make_settings, start_app, fake_llm):
    off = await start_app(make_settings(entity_resolution="off"))
    install(fake_llm, RECORDS)
    await ingest(off, ["town doc"])
    await ingest(off, ["drone doc"])
    assert not any(k.startswith("orlin (") for k in (await graph(off))[0])  # name-only, as LightRAG


async def test_suggest_mode_keeps_apart_and_suggests(make_settings, start_app, fake_llm):
    suggest = await start_app(make_settings(entity_resolution="suggest"))
    install(fake_llm, RECORDS)
    await ingest(suggest, ["town doc"])
    await ingest(suggest, ["drone doc"])
    assert {TOWN, DRONE} <= (await graph(suggest))[0]  # keeping apart is not a merge: it applies
    assert [(r["key_a"], r["key_b"]) for r in await rows(suggest, select(entity_suggestions))] == [(TOWN, DRONE)]


async def test_deletion_rebuild_and_reingest_keep_the_split(make_settings, start_app, fake_llm):
    app = await start_app(make_settings())
    install(fake_llm, RECORDS)
    [town] = await ingest(app, ["town doc"])
    [drone] = await ingest(app, ["drone doc"])
    [again] = await ingest(app, ["drone again"])
    before = await graph(app)
    # the qualified entity is rebuilt from the remaining document's records, mapped through its scoped alias
    assert (await app.http.delete(f"/documents/{again['id']}")).status_code == 200
    found = await descriptions(app)
    assert "survey drone" in found[DRONE][2] and "ten hours" not in found[DRONE][2]
    assert "drone" not in found[TOWN][2]
    await ingest(app, ["drone again"])
    assert await graph(app) == before
    # the product's documents go and come back: same nodes
    for doc in (drone,):
        assert (await app.http.delete(f"/documents/{doc['id']}")).status_code == 200
    await ingest(app, ["drone doc"])
    assert await graph(app) == before
    # the town's document goes: the drone keeps its node; the town comes back under its bare name
    assert (await app.http.delete(f"/documents/{town['id']}")).status_code == 200
    keys, _ = await graph(app)
    assert DRONE in keys and TOWN not in keys
    await ingest(app, ["town doc"])
    assert await graph(app) == before
    found = await descriptions(app)
    assert "drone" not in found[TOWN][2] and "river port" not in found[DRONE][2]


async def test_later_product_documents_reach_the_qualified_entity_when_the_bare_one_is_gone(
    make_settings, start_app, fake_llm
):
    app = await start_app(make_settings())
    install(fake_llm, RECORDS)
    [town] = await ingest(app, ["town doc"])
    await ingest(app, ["drone doc"])
    assert (await app.http.delete(f"/documents/{town['id']}")).status_code == 200
    await ingest(app, ["drone again"])
    keys, _ = await graph(app)
    assert DRONE in keys and TOWN not in keys
    assert "ten hours" in (await descriptions(app))[DRONE][2]


async def test_a_merge_by_the_user_is_not_split_again(make_settings, start_app, fake_llm):
    app = await start_app(make_settings())
    install(fake_llm, RECORDS)
    await ingest(app, ["town doc"])
    await ingest(app, ["drone doc"])
    merged = await app.http.post(
        "/entities/merge", json={"source_entities": ["Orlin (artifact)"], "target_entity": "Orlin"}
    )
    assert merged.status_code == 200, merged.text
    await ingest(app, ["drone again"])
    keys, _ = await graph(app)
    assert TOWN in keys and DRONE not in keys
    assert "ten hours" in (await descriptions(app))[TOWN][2]


async def test_a_renamed_entity_keeps_its_old_name_for_later_documents(make_settings, start_app, fake_llm):
    app = await start_app(make_settings())
    install(fake_llm, RECORDS)
    await ingest(app, ["town doc"])
    renamed = await app.http.patch("/entities/Orlin", json={"new_name": "Orlin-on-Vess"})
    assert renamed.status_code == 200 and renamed.json()["aliases"] == ["Orlin"]
    await ingest(app, ["town again"])
    keys, pairs = await graph(app)
    assert "orlin-on-vess" in keys and TOWN not in keys and ("orlin-on-vess", "vessa quay") in pairs
    assert "regatta" in (await descriptions(app))["orlin-on-vess"][2]
