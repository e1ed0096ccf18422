"""The connection pool under curation load: requests queued on one entity must not fill the pool, and a
transaction holding key locks never waits for a second pooled connection (which those requests hold)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables import entities
from app.services.deletion import service as deletion_service
from app.services.deletion.service import DeletionService
from app.services.graph import entity_merge, merge_texts
from tests.support.curation import Parked, seed_graph
from tests.support.fakes.openai_server import default_summary

MERGES = 8  # more than the pool's 3 + 3 overflow connections
HEALTHY = 5.0  # seconds; a request starved by the pool waits its 30 s checkout timeout


def _star(n: int) -> dict:
    """Target and n sources, each source linked to the target and to its own far end."""
    names = [f"Source{i}" for i in range(n)]
    docs = {"d0": ["c0"], **{f"d{i + 1}": [f"c{i + 1}"] for i in range(n)}}
    ents = [("Target", "person", "Target is the hub.", ["c0"])]
    ents += [(name, "person", f"{name} is number {i}.", [f"c{i + 1}"]) for i, name in enumerate(names)]
    ents += [(f"Far{i}", "place", f"Far{i} is a place.", [f"c{i + 1}"]) for i in range(n)]
    rels = [(name, "Target", f"{name} knows Target.", "knows", 1.0, [f"c{i + 1}"]) for i, name in enumerate(names)]
    rels += [(name, f"Far{i}", f"{name} lives in Far{i}.", "home", 1.0, [f"c{i + 1}"]) for i, name in enumerate(names)]
    return {"docs": docs, "ents": ents, "rels": rels}


async def test_many_slow_merges_into_one_target_keep_the_service_responsive(start_app, make_settings, fake_llm):
    app = await start_app(make_settings(db_pool_size=3))
    async with app.container.db.transaction() as conn:
        await seed_graph(conn, **_star(MERGES))
    arrived = threading.Event()  # set from the fake's own thread

    async def slow_summary(messages: list[dict]) -> str:
        arrived.set()
        await asyncio.sleep(0.15)
        return default_summary(messages)

    fake_llm.handlers["summary"] = slow_summary
    merges = [
        asyncio.create_task(
            app.http.post(
                "/entities/merge",
                json={"source_entities": [f"Source{i}"], "target_entity": "Target", "strategy": "llm_summarize"},
            )
        )
        for i in range(MERGES)
    ]
    ingest = asyncio.create_task(
        app.http.post("/documents", json={"documents": [{"text": "Target met Walter in Oslo."}], "wait": True})
    )
    assert await asyncio.to_thread(arrived.wait, 20)  # the merges are under way
    slowest = 0.0
    while not all(m.done() for m in merges):
        started = time.perf_counter()
        health = await app.http.get("/health")
        slowest = max(slowest, time.perf_counter() - started)
        assert health.status_code == 200
        await asyncio.sleep(0.05)
    responses = await asyncio.gather(*merges)
    assert [r.status_code for r in responses] == [200] * MERGES, [r.text for r in responses if r.status_code != 200]
    assert slowest < HEALTHY, slowest
    # merges on one entity queue, so each writes its LLM text once (the document's merge into Target may
    # outdate one of them), instead of all writing texts that the first to commit outdates
    assert len(fake_llm.calls_of("summary")) <= MERGES + 1
    [doc] = (await ingest).json()["documents"]
    assert doc["status"] == "processed", doc
    target = (await app.http.get("/entities/Target")).json()
    assert {r["target"] for r in target["relations"]} | {r["source"] for r in target["relations"]} >= {
        f"Far{i}" for i in range(MERGES)
    }
    for i in range(MERGES):
        assert (await app.http.get(f"/entities/Source{i}")).json()["name"] == "Target"  # an alias of it now


@asynccontextmanager
async def _hold_one(app) -> AsyncIterator[AsyncConnection]:
    """Hold one of the pool's two connections (DB_POOL_SIZE=1: 1 + 1 overflow): a request that needs two
    at once now waits the 30 s checkout timeout and fails."""
    async with app.container.db.engine.connect() as conn:
        yield conn


async def test_merge_summarising_under_its_locks_needs_one_connection(start_app, make_settings, fake_llm, monkeypatch):
    """The target's text changes after the merge's summary was written (as ingestion would): with no
    tries left outside, it summarises under its locks, looking the cache up on its own connection."""
    monkeypatch.setattr(entity_merge, "_LLM_OUTSIDE_TRIES", 0)
    app = await start_app(make_settings(db_pool_size=1, worker_enabled=False))
    async with app.container.db.transaction() as conn:
        await seed_graph(conn, **_star(1))
    parked = Parked(None, until_arrived=1)  # counts the summary calls
    fake_llm.handlers["summary"] = parked
    real_write = merge_texts.MergeTexts.write
    async with _hold_one(app) as held:

        async def write_then_edit(self, conn=None):
            await real_write(self, conn)
            if conn is None and parked.arrived == 1:  # the first text, written outside: outdate it
                await held.execute(
                    update(entities)
                    .where(entities.c.key == "target")
                    .values(description="Target was renamed meanwhile.")
                )
                await held.commit()

        monkeypatch.setattr(merge_texts.MergeTexts, "write", write_then_edit)
        started = time.perf_counter()
        response = await app.http.post(
            "/entities/merge",
            json={"source_entities": ["Source0"], "target_entity": "Target", "strategy": "llm_summarize"},
        )
    assert response.status_code == 200, response.text
    assert time.perf_counter() - started < HEALTHY
    assert parked.arrived == 2  # summarised again, under the locks, from the current texts
    [prompt] = [m["content"] for m in fake_llm.calls_of("summary")[-1].messages if m["role"] == "user"]
    assert "renamed meanwhile" in prompt


async def test_deletion_planning_under_its_locks_needs_one_connection(start_app, make_settings, fake_llm, monkeypatch):
    """The graph changes while the deletion plans outside its locks; with no tries left it plans again
    under them, summaries included, looking the cache up on its own connection."""
    monkeypatch.setattr(deletion_service, "_PLANS_OUTSIDE_LOCKS", 0)
    ingesting = await start_app(make_settings(force_llm_summary_on_merge=2))
    ids = []
    for text in ("Alice met Bob in Paris.", "Bob visited Paris with Carol.", "Bob sailed to Rome."):
        response = await ingesting.http.post("/documents", json={"documents": [{"text": text}], "wait": True})
        ids.append(response.json()["documents"][0]["id"])
    app = await start_app(make_settings(db_pool_size=1, worker_enabled=False, force_llm_summary_on_merge=2))
    real_prepare = DeletionService._prepare
    plans: list[bool] = []  # whether each plan was made under the locks

    async with _hold_one(app) as held:

        async def prepare_then_edit(self, *args, batch=None):
            prepared = await real_prepare(self, *args, batch=batch)
            plans.append(batch is not None)
            if len(plans) == 1:  # another writer changes a rebuilt entity meanwhile
                await held.execute(
                    update(entities).where(entities.c.key == "paris").values(description="Paris, edited meanwhile.")
                )
                await held.commit()
            return prepared

        monkeypatch.setattr(DeletionService, "_prepare", prepare_then_edit)
        started = time.perf_counter()
        response = await app.http.delete(f"/documents/{ids[0]}")
    assert response.status_code == 200, response.text
    assert time.perf_counter() - started < HEALTHY
    assert plans == [False, True]
    assert response.json()["llm_calls"]["summary"] >= 1  # Bob's rebuild is summarised: the cache was read
