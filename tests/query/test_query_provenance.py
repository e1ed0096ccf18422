"""A query's provenance memo: keys already read are not asked again, and callers get lists of their own."""

from __future__ import annotations

import asyncio

import pytest

from app.repositories import retrieval as repo
from app.services.query.provenance import QueryProvenance


async def test_only_keys_not_read_yet_are_asked_and_answers_are_copies(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[list[str], list[tuple[str, str]]]] = []

    async def stored(conn, project_id, keys, pairs):  # noqa: ANN001
        asked.append((keys, pairs))
        return {k: [f"{k}-c"] for k in keys}, {p: [f"{p[0]}{p[1]}-c"] for p in pairs}

    monkeypatch.setattr(repo, "source_chunk_ids", stored)
    memo = QueryProvenance("p")
    first, _ = await memo.read(None, ["a", "b", "a"], [("a", "b")])  # type: ignore[arg-type]
    first["a"].append("changed by a caller")
    by_entity, by_pair = await memo.read(None, ["b", "c", "a"], [("a", "b"), ("b", "c")])  # type: ignore[arg-type]
    assert asked == [(["a", "b"], [("a", "b")]), (["c"], [("b", "c")])]
    assert by_entity == {"b": ["b-c"], "c": ["c-c"], "a": ["a-c"]}
    assert by_pair == {("a", "b"): ["ab-c"], ("b", "c"): ["bc-c"]}
    assert await memo.read(None, [], []) == ({}, {})  # type: ignore[arg-type]
    assert len(asked) == 2


async def test_keys_the_other_sides_read_is_bringing_are_awaited_not_read_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked, started, release = _held_reads(monkeypatch, "slow")
    memo = QueryProvenance("p")
    first = asyncio.create_task(memo.read("slow", ["hub", "a"], []))  # type: ignore[arg-type]
    await started.wait()
    second = asyncio.create_task(memo.read("fast", ["b", "hub"], []))  # type: ignore[arg-type]
    await asyncio.sleep(0.01)
    assert not second.done()  # it has read "b" and waits for "hub"
    release.set()
    assert (await first)[0] == {"hub": ["hub-c"], "a": ["a-c"]}
    assert (await second)[0] == {"b": ["b-c"], "hub": ["hub-c"]}
    assert asked == [["hub", "a"], ["b"]]


async def test_a_failed_read_fails_the_reads_waiting_for_it_and_its_keys_are_read_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked, started, release = _held_reads(monkeypatch, "failing", RuntimeError("connection lost"))
    memo = QueryProvenance("p")
    first = asyncio.create_task(memo.read("failing", ["hub"], []))  # type: ignore[arg-type]
    await started.wait()
    waiting = asyncio.create_task(memo.read("fine", ["hub"], []))  # type: ignore[arg-type]
    await asyncio.sleep(0)
    release.set()
    for task in (first, waiting):
        with pytest.raises(RuntimeError, match="connection lost"):
            await task
    assert (await memo.read("fine", ["hub"], []))[0] == {"hub": ["hub-c"]}  # type: ignore[arg-type]
    assert asked == [["hub"], ["hub"]]


def _held_reads(
    monkeypatch: pytest.MonkeyPatch, held: str, error: Exception | None = None
) -> tuple[list[list[str]], asyncio.Event, asyncio.Event]:
    """Provenance reads faked: each read's keys recorded; a read on the connection `held` signals `started`
    and waits for `release`, then fails with `error` if given."""
    started, release = asyncio.Event(), asyncio.Event()
    asked: list[list[str]] = []

    async def stored(conn, project_id, keys, pairs):  # noqa: ANN001
        asked.append(keys)
        if conn == held:
            started.set()
            await release.wait()
            if error is not None:
                raise error
        return {k: [f"{k}-c"] for k in keys}, {p: [] for p in pairs}

    monkeypatch.setattr(repo, "source_chunk_ids", stored)
    return asked, started, release
