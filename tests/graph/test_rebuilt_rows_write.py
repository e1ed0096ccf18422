"""The rows a deletion rebuilds are written with one UPDATE per table, their new vectors included
(repositories/deletion.py::update_rebuilt_entities / update_rebuilt_relations). Real database, fake models."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.db.tables import entities, relations
from app.domain.rows import EntityEmbeddingUpdate, RelationEmbeddingUpdate
from app.domain.texts import entity_embedding_text, relation_embedding_text
from app.repositories import deletion as deletion_repo
from tests.graph.test_deletion import query, three_docs  # noqa: F401 (fixture)
from tests.support.fakes.openai_server import fake_embedding


async def _entity(app, key: str) -> dict:
    [row] = await query(app, select(entities).where(entities.c.project_id == "default", entities.c.key == key))
    return row


async def test_rebuilt_items_store_the_vector_of_their_new_text(three_docs):  # noqa: F811
    app, (doc_a, _, _) = three_docs
    assert (await app.http.delete(f"/documents/{doc_a}")).status_code == 200
    dim = app.container.settings.embedding_dim
    bob = await _entity(app, "bob")
    assert list(bob["embedding"]) == pytest.approx(
        fake_embedding(entity_embedding_text(bob["name"], bob["description"]), dim), abs=1e-6
    )
    [rel] = await query(
        app,
        select(relations).where(
            relations.c.project_id == "default", relations.c.src_key == "bob", relations.c.tgt_key == "paris"
        ),
    )
    text = relation_embedding_text("Bob", "Paris", rel["keywords"], rel["description"])
    assert list(rel["embedding"]) == pytest.approx(fake_embedding(text, dim), abs=1e-6)


async def test_a_vector_is_stored_only_with_the_text_it_was_computed_from(three_docs):  # noqa: F811
    app, _ = three_docs
    dim = app.container.settings.embedding_dim
    before = {k: await _entity(app, k) for k in ("bob", "paris")}
    rows = [
        {
            "key": k,
            "entity_type": r["entity_type"],
            "description": f"New text of {k}.",
            "source_ids": ["x", "y"],
            "file_paths": ["f.txt"],
            "truncate": "",
        }
        for k, r in before.items()
    ]
    vectors = [
        EntityEmbeddingUpdate("bob", "New text of bob.", [0.5] * dim, "hash-bob"),
        EntityEmbeddingUpdate("paris", "an older text", [0.25] * dim, "hash-paris"),
    ]
    async with app.container.db.transaction() as conn:
        await deletion_repo.update_rebuilt_entities(conn, "default", rows, vectors)
    bob, paris = await _entity(app, "bob"), await _entity(app, "paris")
    assert (bob["description"], bob["source_ids"], bob["file_paths"]) == ("New text of bob.", ["x", "y"], ["f.txt"])
    assert list(bob["embedding"]) == [0.5] * dim and bob["embedded_hash"] == "hash-bob"
    assert bob["name"] == before["bob"]["name"]  # the display name is never rewritten
    assert paris["description"] == "New text of paris."
    assert list(paris["embedding"]) == list(before["paris"]["embedding"])  # compare-and-set: not stored
    assert paris["embedded_hash"] == before["paris"]["embedded_hash"]


async def test_relations_keep_their_vector_when_none_is_given(three_docs):  # noqa: F811
    app, _ = three_docs
    cond = (relations.c.project_id == "default", relations.c.src_key == "bob", relations.c.tgt_key == "paris")
    [before] = await query(app, select(relations).where(*cond))
    row = {
        "src_key": "bob",
        "tgt_key": "paris",
        "keywords": "k1,k2",
        "description": "Rewritten.",
        "weight": 3.5,
        "source_ids": ["c1"],
        "file_paths": [],
        "truncate": "note",
    }
    async with app.container.db.transaction() as conn:
        await deletion_repo.update_rebuilt_relations(conn, "default", [row], [])
    [after] = await query(app, select(relations).where(*cond))
    assert (
        after["keywords"],
        after["description"],
        after["weight"],
        after["source_ids"],
        after["file_paths"],
        after["truncate"],
    ) == ("k1,k2", "Rewritten.", 3.5, ["c1"], [], "note")
    assert list(after["embedding"]) == list(before["embedding"]) and after["embedded_hash"] == before["embedded_hash"]
    dim = len(before["embedding"])
    vector = RelationEmbeddingUpdate("bob", "paris", "Rewritten.", "k1,k2", [0.125] * dim, "h")
    async with app.container.db.transaction() as conn:
        await deletion_repo.update_rebuilt_relations(conn, "default", [row], [vector])
    [last] = await query(app, select(relations).where(*cond))
    assert list(last["embedding"]) == [0.125] * dim and last["embedded_hash"] == "h"
