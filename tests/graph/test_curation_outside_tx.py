"""Entity edit, rename, relation edits and merge call the embedder (and the LLM) with no transaction open and
no key lock held: another writer proceeds meanwhile, and the vectors stored in the end match the stored text
even when that writer changed it (the write tries again, and after repeated changes embeds under its locks)."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text

from app.domain.names import entity_key
from app.domain.rows import EntityText, RelationText
from app.domain.texts import entity_embedding_text, relation_embedding_text, text_hash
from app.repositories import graph as graph_repo
from app.repositories import graph_curation as curation_repo
from app.services.graph import vectors as vectors_module
from app.services.graph.embedding import embed_changed
from tests.support.curation import ADVISORY_HERE, Parked, entity_row, relation_row, seed_graph

GRAPH = {
    "docs": {"d1": ["c1", "c2"]},
    "ents": [
        ("Alpha", "person", "Alpha leads the team.", ["c1"]),
        ("Mid", "organization", "Mid is a company.", ["c1"]),
        ("Zed", "location", "Zed is a city.", ["c2"]),
    ],
    "rels": [
        ("Alpha", "Mid", "Alpha works at Mid.", "employment", 2.0, ["c1"]),
        ("Alpha", "Zed", "Alpha lives in Zed.", "residence", 1.0, ["c2"]),
    ],
}


@pytest.fixture
async def seeded(app_client):
    """The graph, embedded as ingestion leaves it."""
    async with app_client.container.db.transaction() as conn:
        await seed_graph(conn, **GRAPH)
        ents = (await curation_repo.get_entities(conn, "default", ["alpha", "mid", "zed"])).values()
        rels = await curation_repo.relations_touching(conn, "default", ["alpha", "mid", "zed"])
        done = await embed_changed(app_client.container.embedder, map(EntityText.of, ents), map(RelationText.of, rels))
        await curation_repo.set_entity_embeddings(conn, "default", done[0])
        await curation_repo.set_relation_embeddings(conn, "default", done[1])
    return app_client


class HeldEmbedder:
    """Wraps the container's embedder (the fake HTTP provider still answers): each call first runs
    `on_call(n)`, notes how many key locks were held at that moment, and waits until `released` is set."""

    def __init__(self, app, monkeypatch, on_call=None) -> None:
        self.app = app
        self.real = app.container.embedder.embed
        self.on_call = on_call
        self.calls = 0
        self.locks_seen: list[int] = []
        self.released = asyncio.Event()
        self.released.set()
        self.arrived = asyncio.Event()
        monkeypatch.setattr(app.container.embedder, "embed", self)

    async def __call__(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        self.locks_seen.append(await advisory_locks(self.app))
        if self.on_call is not None:
            await self.on_call(self.calls)
        self.arrived.set()
        await asyncio.wait_for(self.released.wait(), 20)
        return await self.real(texts)


async def advisory_locks(app) -> int:
    async with app.container.db.connect() as conn:
        return int(await conn.scalar(text(f"SELECT count(*) FROM pg_locks WHERE {ADVISORY_HERE}")))


async def open_transactions(app) -> list:
    """Transactions of this database open for over half a second (the worker's polling opens short ones)."""
    await asyncio.sleep(0.6)
    async with app.container.db.connect() as conn:
        return (
            await conn.execute(
                text(
                    "SELECT state, query FROM pg_stat_activity WHERE datname = current_database() "
                    "AND pid <> pg_backend_pid() AND xact_start < now() - interval '0.5 seconds'"
                )
            )
        ).all()


async def lock_quickly(app, keys: list[str]) -> None:
    """Take the keys' advisory locks as any graph writer would, failing if that has to wait."""
    async with app.container.db.transaction() as conn:
        await conn.execute(text("SET LOCAL lock_timeout = '2s'"))
        await graph_repo.lock_keys(conn, "default", keys)


async def assert_vectors_match(app, entity: str, relations: list[tuple[str, str]]) -> None:
    async with app.container.db.connect() as conn:
        row = await entity_row(conn, entity)
        assert row["embedded_hash"] == text_hash(entity_embedding_text(row["name"], row["description"]))
        for a, b in relations:
            rel = await relation_row(conn, a, b)
            names = {entity_key(n): n for n in (a, b)}
            body = relation_embedding_text(
                names[rel["src_key"]], names[rel["tgt_key"]], rel["keywords"], rel["description"]
            )
            assert rel["embedded_hash"] == text_hash(body), (a, b)


async def _while_held(app, embedder: HeldEmbedder, request) -> object:
    """Start `request`, and once it waits on the embedder check that it holds nothing in the database."""
    embedder.released.clear()
    task = asyncio.ensure_future(request)
    try:
        await asyncio.wait_for(embedder.arrived.wait(), 20)
        assert await advisory_locks(app) == 0
        assert await open_transactions(app) == []
        await lock_quickly(app, ["alpha", "mid", "zed", "alpha prime"])
    finally:
        embedder.released.set()
    return await task


async def test_edit_waits_on_the_embedder_holding_no_lock(seeded, monkeypatch):
    embedder = HeldEmbedder(seeded, monkeypatch)
    response = await _while_held(
        seeded, embedder, seeded.http.patch("/entities/Alpha", json={"description": "Alpha now leads two teams."})
    )
    assert response.status_code == 200, response.text
    assert embedder.locks_seen == [0]  # one call, made before the transaction
    await assert_vectors_match(seeded, "Alpha", [])


async def test_rename_and_relation_edit_wait_on_the_embedder_holding_no_lock(seeded, monkeypatch):
    embedder = HeldEmbedder(seeded, monkeypatch)
    response = await _while_held(
        seeded, embedder, seeded.http.patch("/entities/Alpha", json={"new_name": "Alpha Prime"})
    )
    assert response.status_code == 200, response.text
    assert set(embedder.locks_seen) == {0}
    await assert_vectors_match(seeded, "Alpha Prime", [("Alpha Prime", "Mid"), ("Alpha Prime", "Zed")])

    embedder.arrived.clear()
    response = await _while_held(
        seeded,
        embedder,
        seeded.http.patch(
            "/relations", json={"source": "Mid", "target": "Alpha Prime", "description": "Alpha Prime runs Mid."}
        ),
    )
    assert response.status_code == 200, response.text
    assert set(embedder.locks_seen) == {0}
    await assert_vectors_match(seeded, "Mid", [("Alpha Prime", "Mid")])


async def test_merge_waits_on_the_llm_and_the_embedder_holding_no_lock(seeded, monkeypatch, fake_llm):
    parked = Parked("Mid, which absorbed Zed.")
    fake_llm.handlers["summary"] = parked
    embedder = HeldEmbedder(seeded, monkeypatch)
    merge = asyncio.create_task(
        seeded.http.post(
            "/entities/merge", json={"source_entities": ["Zed"], "target_entity": "Mid", "strategy": "llm_summarize"}
        )
    )
    try:
        await parked.wait_arrived()
        assert await advisory_locks(seeded) == 0 and await open_transactions(seeded) == []
        await lock_quickly(seeded, ["alpha", "mid", "zed"])
    finally:
        parked.release()
    response = await _while_held(seeded, embedder, merge)
    assert response.status_code == 200, response.text
    assert set(embedder.locks_seen) == {0}
    await assert_vectors_match(seeded, "Mid", [("Alpha", "Mid")])
    assert (await seeded.http.get("/entities/Mid")).json()["description"] == "Mid, which absorbed Zed."


async def test_text_changed_while_embedding_is_embedded_again_then_under_the_locks(seeded, monkeypatch):
    """A concurrent writer changes a relation of the entity being renamed during every embedding call made
    outside the transaction: each attempt finds a text without a vector and rolls back, until the last
    embeds under its locks. The stored vectors match the final texts."""
    outside = vectors_module.OUTSIDE_TRIES + 1

    async def change_relation(call: int) -> None:
        if call <= outside:
            async with seeded.container.db.transaction() as conn:
                await conn.execute(
                    text(
                        "UPDATE relations SET description = :d WHERE project_id = 'default' "
                        "AND src_key = 'alpha' AND tgt_key = 'mid'"
                    ),
                    {"d": f"Alpha works at Mid, version {call}."},
                )

    embedder = HeldEmbedder(seeded, monkeypatch, on_call=change_relation)
    response = await seeded.http.patch("/entities/Alpha", json={"new_name": "Alpha Prime"})
    assert response.status_code == 200, response.text
    assert embedder.calls == outside + 1
    assert embedder.locks_seen[:outside] == [0] * outside and embedder.locks_seen[-1] > 0
    async with seeded.container.db.connect() as conn:
        rel = await relation_row(conn, "Alpha Prime", "Mid")
    assert rel["description"] == f"Alpha works at Mid, version {outside}."
    await assert_vectors_match(seeded, "Alpha Prime", [("Alpha Prime", "Mid"), ("Alpha Prime", "Zed")])


async def test_a_failed_embedding_changes_nothing(seeded, fake_llm):
    fake_llm.embeddings_down = True
    response = await seeded.http.patch("/entities/Alpha", json={"description": "Never stored."})
    assert response.status_code == 503, response.text
    async with seeded.container.db.connect() as conn:
        assert (await entity_row(conn, "Alpha"))["description"] == "Alpha leads the team."
