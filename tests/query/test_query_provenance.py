"""A query's provenance memo: keys already read are not asked again, and callers get lists of their own."""

from __future__ import annotations

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
