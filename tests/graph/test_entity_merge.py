"""POST /entities/merge: strategies, relation redirection, self-loops, collapsing pairs, provenance, 4xx."""

from __future__ import annotations

import pytest

from app.db.tables import entities, relations
from app.domain.texts import SEP, entity_embedding_text, relation_embedding_text, text_hash
from tests.support.curation import (
    count,
    entity_provenance,
    entity_row,
    relation_provenance,
    relation_row,
    rows,
    seed_graph,
)

# Apple Inc and Apple are the same company; both relate to Cupertino and Jobs, and to each other.
GRAPH = {
    "docs": {"d1": ["c1", "c2"], "d2": ["c3", "c4"]},
    "ents": [
        ("Apple Inc", "organization", "Apple Inc makes phones.", ["c1", "c2"]),
        ("Apple", "unknown", f"Apple is a tech company.{SEP}Apple makes phones and computers.", ["c3"]),
        ("Cupertino", "location", "Cupertino is a city.", ["c1"]),
        ("Jobs", "person", "Jobs founded Apple.", ["c2", "c4"]),
    ],
    "rels": [
        ("Apple Inc", "Cupertino", "Apple Inc is headquartered in Cupertino.", "headquarters", 2.0, ["c1"]),
        ("Apple", "Cupertino", "Apple sits in Cupertino.", "location,campus", 1.5, ["c3"]),
        ("Apple Inc", "Jobs", "Jobs led Apple Inc.", "leadership", 1.0, ["c2"]),
        ("Apple", "Apple Inc", "Apple is short for Apple Inc.", "alias", 1.0, ["c3"]),
        ("Cupertino", "Jobs", "Jobs lived near Cupertino.", "home", 1.0, ["c4"]),
    ],
}


@pytest.fixture
async def seeded(app_client):
    async with app_client.container.db.transaction() as conn:
        await seed_graph(conn, **GRAPH)
    return app_client


async def _merge(app, **body):
    return await app.http.post("/entities/merge", json=body)


async def test_merge_into_new_target_concatenate(seeded):
    response = await _merge(seeded, source_entities=["Apple Inc", "apple"], target_entity="Apple Computer")
    assert response.status_code == 200
    assert response.json() == {
        "target": "Apple Computer",
        "merged_sources": ["Apple Inc", "Apple"],
        "relations_redirected": 3,
        "relations_merged": 1,
        "self_loops_dropped": 1,
    }
    async with seeded.container.db.connect() as conn:
        assert await entity_row(conn, "Apple Inc") is None and await entity_row(conn, "Apple") is None
        target = await entity_row(conn, "Apple Computer")
        assert target["description"] == SEP.join(
            ["Apple Inc makes phones.", "Apple is a tech company.", "Apple makes phones and computers."]
        )
        assert target["entity_type"] == "organization"  # first known type
        assert target["source_ids"] == ["c1", "c2", "c3"]
        assert target["file_paths"] == ["d1.txt", "d2.txt"]
        assert target["embedded_hash"] == text_hash(entity_embedding_text("Apple Computer", target["description"]))
        assert await entity_provenance(conn, "Apple Computer") == ["c1", "c2", "c3"]

        # Two relations to Cupertino collapsed into one: weights added, keywords unioned, provenance unioned.
        cup = await relation_row(conn, "Apple Computer", "Cupertino")
        assert cup["weight"] == 3.5
        assert cup["keywords"] == "campus,headquarters,location"
        assert cup["description"] == SEP.join(["Apple Inc is headquartered in Cupertino.", "Apple sits in Cupertino."])
        assert await relation_provenance(conn, "Apple Computer", "Cupertino") == ["c1", "c3"]
        assert cup["embedded_hash"] == text_hash(
            relation_embedding_text("Apple Computer", "Cupertino", cup["keywords"], cup["description"])
        )
        jobs = await relation_row(conn, "Apple Computer", "Jobs")
        assert jobs["weight"] == 1.0 and await relation_provenance(conn, "Jobs", "Apple Computer") == ["c2"]
        # The Apple–Apple Inc relation would have become Apple Computer→Apple Computer: dropped.
        assert await count(conn, relations) == 3
        assert (await entity_row(conn, "Apple Computer"))["degree"] == 2
        assert (await entity_row(conn, "Cupertino"))["degree"] == 2
        assert await count(conn, entities) == 3


async def test_merge_into_existing_target_among_sources(seeded):
    response = await _merge(
        seeded, source_entities=["Apple", "Apple Inc"], target_entity="apple inc", strategy="keep_first"
    )
    assert response.status_code == 200
    report = response.json()
    assert report["merged_sources"] == ["Apple"]
    assert report["self_loops_dropped"] == 1 and report["relations_merged"] == 1
    async with seeded.container.db.connect() as conn:
        assert await entity_row(conn, "Apple") is None
        target = await entity_row(conn, "Apple Inc")
        assert target["name"] == "apple inc"  # the display name asked for
        assert target["description"] == f"Apple is a tech company.{SEP}Apple makes phones and computers."
        assert await entity_provenance(conn, "Apple Inc") == ["c1", "c2", "c3"]
        cup = await relation_row(conn, "Apple Inc", "Cupertino")
        assert cup["description"] == "Apple sits in Cupertino."  # keep_first in request order (Apple first)
        assert cup["weight"] == 3.5


async def test_merge_keep_longest(seeded):
    response = await _merge(
        seeded, source_entities=["Apple Inc", "Apple"], target_entity="Apple", strategy="keep_longest"
    )
    assert response.status_code == 200
    async with seeded.container.db.connect() as conn:
        target = await entity_row(conn, "Apple")
        assert target["description"] == f"Apple is a tech company.{SEP}Apple makes phones and computers."
        cup = await relation_row(conn, "Apple", "Cupertino")
        assert cup["description"] == "Apple Inc is headquartered in Cupertino."


async def test_merge_llm_summarize_calls_summary(seeded, fake_llm):
    fake_llm.handlers["summary"] = lambda messages: "One merged summary."
    response = await _merge(
        seeded, source_entities=["Apple Inc", "Apple"], target_entity="Apple", strategy="llm_summarize"
    )
    assert response.status_code == 200
    assert len(fake_llm.calls_of("summary")) == 2  # the entity and the collapsed Cupertino relation
    assert not fake_llm.calls_of("extract")
    async with seeded.container.db.connect() as conn:
        assert (await entity_row(conn, "Apple"))["description"] == "One merged summary."
        assert (await relation_row(conn, "Apple", "Cupertino"))["description"] == "One merged summary."
        # A relation with one description is left as it was.
        assert (await relation_row(conn, "Apple", "Jobs"))["description"] == "Jobs led Apple Inc."


async def test_target_entity_data_overrides(seeded):
    response = await _merge(
        seeded,
        source_entities=["Apple Inc", "Apple"],
        target_entity="Apple",
        target_entity_data={"description": "Curated text.", "entity_type": "Company"},
    )
    assert response.status_code == 200
    async with seeded.container.db.connect() as conn:
        target = await entity_row(conn, "Apple")
        assert (target["description"], target["entity_type"]) == ("Curated text.", "company")


async def test_merge_unknown_source_is_404_and_changes_nothing(seeded):
    async with seeded.container.db.connect() as conn:
        before = (
            await rows(conn, entities, order=[entities.c.key]),
            await rows(conn, relations, order=[relations.c.src_key, relations.c.tgt_key]),
        )
    response = await _merge(seeded, source_entities=["Apple", "Orange"], target_entity="Apple Inc")
    assert response.status_code == 404
    assert response.json()["code"] == "entity_not_found" and "Orange" in response.json()["detail"]
    async with seeded.container.db.connect() as conn:
        after = (
            await rows(conn, entities, order=[entities.c.key]),
            await rows(conn, relations, order=[relations.c.src_key, relations.c.tgt_key]),
        )
    assert after == before


async def test_merge_is_atomic_when_embedding_fails(start_app, make_settings, fake_llm):
    app = await start_app(make_settings(embedding_max_retries=0))
    async with app.container.db.transaction() as conn:
        await seed_graph(conn, **GRAPH)
    fake_llm.fail_next_embeddings(5, status=500)
    response = await _merge(app, source_entities=["Apple Inc", "Apple"], target_entity="Apple")
    assert response.status_code == 503
    async with app.container.db.connect() as conn:
        assert await entity_row(conn, "Apple Inc") is not None
        assert await count(conn, relations) == 5


async def test_merge_bad_input(seeded):
    assert (await _merge(seeded, source_entities=[], target_entity="X")).status_code == 422
    assert (await _merge(seeded, source_entities=["Apple"], target_entity="X", strategy="avg")).status_code == 422
    assert (await _merge(seeded, source_entities=["Apple"], target_entity="   ")).status_code == 422
    assert (await _merge(seeded, source_entities=["Apple"], target_entity="X", project_id="nope")).status_code == 404
    assert (await _merge(seeded, source_entities=["Apple"], target_entity="X", extra=1)).status_code == 422
