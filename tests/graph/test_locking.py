"""The one locking protocol of graph writes (services/graph/gate.py::locked_keys): what runs first, which
advisory locks are held and until when, and what the pipeline's lock counters see."""

from __future__ import annotations

import pytest
from prometheus_client import REGISTRY
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.services.graph.gate import locked_keys

HELD_BY_ME = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()"


async def _free(db, project_id: str, key: str) -> bool:
    """Whether another transaction could take the key's lock now (without waiting)."""
    async with db.transaction() as conn:
        return bool(
            await conn.scalar(
                text("SELECT pg_try_advisory_xact_lock(hashtext(:p || ':' || :k))"), {"p": project_id, "k": key}
            )
        )


def _lock_seconds(step: str, phase: str) -> float:
    return REGISTRY.get_sample_value("pipeline_key_lock_seconds_total", {"step": step, "phase": phase}) or 0.0


async def test_first_runs_before_the_key_locks_which_last_until_the_transaction_ends(app_client):
    db = app_client.container.db
    seen: list[int] = []

    async def first(conn: AsyncConnection) -> None:
        seen.append(await conn.scalar(text(HELD_BY_ME)))

    async with locked_keys(db, "default", ["zeta", "alpha", "zeta"], first=first) as conn:
        assert seen == [0]
        assert await conn.scalar(text(HELD_BY_ME)) == 2  # each key once
        assert not await _free(db, "default", "alpha") and not await _free(db, "default", "zeta")
        assert await _free(db, "other", "alpha")  # keys are per project
    assert await _free(db, "default", "alpha") and await _free(db, "default", "zeta")


async def test_a_failed_write_rolls_back_and_releases_the_locks(app_client):
    db = app_client.container.db
    with pytest.raises(RuntimeError):
        async with locked_keys(db, "default", ["alpha"]) as conn:
            await conn.execute(text("UPDATE projects SET name = 'changed' WHERE id = 'default'"))
            raise RuntimeError("write failed")
    assert await _free(db, "default", "alpha")
    async with db.connect() as conn:
        assert await conn.scalar(text("SELECT name FROM projects WHERE id = 'default'")) != "changed"


async def test_a_named_step_counts_the_wait_and_the_hold_once_committed(app_client):
    db = app_client.container.db
    step = "locking-test"
    wait, held = _lock_seconds(step, "wait"), _lock_seconds(step, "held")
    async with locked_keys(db, "default", ["alpha"], gate=False, step=step):
        assert _lock_seconds(step, "wait") >= wait and _lock_seconds(step, "held") == held
    after = _lock_seconds(step, "held")
    assert after > held
    with pytest.raises(RuntimeError):
        async with locked_keys(db, "default", ["alpha"], gate=False, step=step):
            raise RuntimeError("rolled back")
    assert _lock_seconds(step, "held") == after  # only committed transactions count their hold
