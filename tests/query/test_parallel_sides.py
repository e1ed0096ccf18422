"""hybrid and mix run the local side on the query's transaction and the global side and the chunk searches on
a second pooled connection at once, but only when the pool can give that connection without waiting: with
every connection held, a query waiting for its second one could wait forever."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from app.db.engine import Database
from tests.support.query_graph import THRESHOLD, WEATHER_QUERY, algernon_graph

ASK = {
    "query": WEATHER_QUERY,
    "ll_keywords": ["Charlie Gordon"],
    "hl_keywords": ["mentorship, romance"],
    "only_need_context": True,
}


@pytest.fixture
async def app(start_app, make_settings):
    app = await start_app(make_settings(cosine_threshold=THRESHOLD, db_pool_size=1, worker_enabled=False))
    async with app.container.db.transaction() as conn:
        await algernon_graph().insert(conn)
    return app


def _count_spares(db: Database, monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Record, per query, whether a second connection was given."""
    given: list[bool] = []
    original = Database.spare

    @contextlib.asynccontextmanager
    async def spare(self: Database, beside=None):
        async with original(self, beside) as conn:
            given.append(conn is not None)
            yield conn

    monkeypatch.setattr(Database, "spare", spare)
    return given


async def context(app, mode: str) -> dict:
    response = await app.http.post("/query", json={**ASK, "mode": mode})
    assert response.status_code == 200, response.text
    return response.json()["context"]


@pytest.mark.parametrize("mode", ["hybrid", "mix"])
async def test_both_sides_at_once_give_the_context_of_one_side_after_the_other(app, mode, monkeypatch):
    given = _count_spares(app.container.db, monkeypatch)
    at_once = await context(app, mode)
    async with app.container.db.connect() as held:  # with one of the two connections taken, no second one
        await held.exec_driver_sql("SELECT 1")
        in_turn = await context(app, mode)
    assert given == [True, False]
    assert at_once == in_turn
    assert {e["name"] for e in at_once["entities"]} >= {"Charlie Gordon", "Alice Kinnian"}
    if mode == "mix":
        assert any("weather" in c["content"] for c in at_once["chunks"])


async def test_a_full_pool_never_makes_a_query_wait_for_its_second_connection(app):
    db = app.container.db
    async with db.connect() as held:
        await held.exec_driver_sql("SELECT 1")
        # the query takes the last connection; waiting for another would last the pool timeout (30 s)
        ctx = await asyncio.wait_for(context(app, "mix"), timeout=10)
    assert ctx["entities"]
    async with db.spare() as first, db.spare() as second, db.spare() as third:
        assert first is not None and second is not None and third is None
