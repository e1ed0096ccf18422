"""The question's nearest chunks seed both sides' graph walks (`graph_chunks.ranked_chunk_ids`): hybrid and mix
read them once per query, shared by the two sides on their two connections, and rank exactly as when each
side read them itself."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import event

from app.repositories import neighbourhood
from app.services.query.provenance import QueryProvenance
from tests.support.query_graph import THRESHOLD, WEATHER_QUERY, algernon_graph

ASK = {
    "query": WEATHER_QUERY,
    "ll_keywords": ["Charlie Gordon"],
    "hl_keywords": ["mentorship, romance"],
    "only_need_context": True,
}
NEAREST_SQL = "ORDER BY es.seq LIMIT"  # only the nearest-chunk search reads a chunk's entities so


@pytest.fixture
async def app(start_app, make_settings):
    app = await start_app(make_settings(cosine_threshold=THRESHOLD, worker_enabled=False))
    async with app.container.db.transaction() as conn:
        await algernon_graph().insert(conn)
    return app


async def searches_and_context(app, mode: str) -> tuple[int, dict]:
    """How many nearest-chunk searches one query ran, and its context."""
    statements: list[str] = []

    def count(_conn, _cursor, statement, *_args) -> None:
        statements.append(statement)

    engine = app.container.db.engine.sync_engine
    event.listen(engine, "before_cursor_execute", count)
    try:
        response = await app.http.post("/query", json={**ASK, "mode": mode})
    finally:
        event.remove(engine, "before_cursor_execute", count)
    assert response.status_code == 200, response.text
    return sum(NEAREST_SQL in s for s in statements), response.json()["context"]


@pytest.mark.parametrize("mode", ["hybrid", "mix"])
async def test_both_sides_walk_from_one_nearest_chunk_search(app, mode, monkeypatch):
    searches, shared = await searches_and_context(app, mode)
    assert searches == 1
    assert shared["chunks"]

    async def unshared(self, conn, vec, limit, max_distance, per_chunk):  # each side reads its own
        return await neighbourhood.nearest_chunk_entities(conn, self.project_id, vec, limit, max_distance, per_chunk)

    monkeypatch.setattr(QueryProvenance, "nearest_chunks", unshared)
    searches, alone = await searches_and_context(app, mode)
    assert searches == 2
    assert alone == shared  # same chunks in the same order, same graph


async def test_one_sided_modes_search_once_and_the_next_query_searches_again(app):
    for mode in ("local", "global", "local"):
        assert (await searches_and_context(app, mode))[0] == 1


async def test_a_caller_arriving_meanwhile_waits_for_the_read_and_gets_lists_of_its_own(monkeypatch):
    started, release, calls = asyncio.Event(), asyncio.Event(), []

    async def slow(conn, project_id, vec, limit, max_distance, per_chunk):
        calls.append(conn)
        started.set()
        await release.wait()
        return [("c1", 0.1, ["a", "b"])]

    monkeypatch.setattr(neighbourhood, "nearest_chunk_entities", slow)
    memo = QueryProvenance("p")
    first = asyncio.create_task(memo.nearest_chunks("conn-1", [1.0, 0.0], 5, 0.8, 20))  # type: ignore[arg-type]
    await started.wait()
    second = asyncio.create_task(memo.nearest_chunks("conn-2", [1.0, 0.0], 5, 0.8, 20))  # type: ignore[arg-type]
    await asyncio.sleep(0)
    release.set()
    a, b = await first, await second
    assert calls == ["conn-1"]
    assert a == b == [("c1", 0.1, ["a", "b"])]
    a[0][2].append("changed by a caller")
    assert b[0][2] == ["a", "b"]
    await memo.nearest_chunks("conn-2", [0.0, 1.0], 5, 0.8, 20)  # type: ignore[arg-type]
    assert calls == ["conn-1", "conn-2"]  # another vector is another search


async def test_a_failed_read_fails_its_waiter_and_is_read_again_later(monkeypatch):
    started, release, calls = asyncio.Event(), asyncio.Event(), []

    async def failing(conn, project_id, vec, limit, max_distance, per_chunk):
        calls.append(conn)
        if len(calls) == 1:
            started.set()
            await release.wait()
            raise RuntimeError("connection lost")
        return []

    monkeypatch.setattr(neighbourhood, "nearest_chunk_entities", failing)
    memo = QueryProvenance("p")
    first = asyncio.create_task(memo.nearest_chunks("conn-1", [1.0], 5, 0.8, 20))  # type: ignore[arg-type]
    await started.wait()
    waiter = asyncio.create_task(memo.nearest_chunks("conn-2", [1.0], 5, 0.8, 20))  # type: ignore[arg-type]
    await asyncio.sleep(0)
    release.set()
    for task in (first, waiter):
        with pytest.raises(RuntimeError, match="connection lost"):
            await task
    assert await memo.nearest_chunks("conn-2", [1.0], 5, 0.8, 20) == []  # type: ignore[arg-type]
    assert calls == ["conn-1", "conn-2"]
