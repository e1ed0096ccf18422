"""A query binds its vector to several statements; `QueryVector` writes its text form once and must send
exactly what pgvector's own type sends, so every distance, and every result, stays as it was."""

from __future__ import annotations

import random

import pgvector
import pytest
from pgvector.sqlalchemy import Vector
from sqlalchemy import TextClause, bindparam, text
from sqlalchemy.dialects.postgresql.asyncpg import dialect as asyncpg_dialect

from app.db.engine import Database, async_url
from app.repositories import neighbourhood, retrieval
from app.repositories.retrieval import QUERY_VECTOR, QueryVector

DIALECT = asyncpg_dialect()


def _both(value: object) -> tuple[object, object]:
    return QueryVector().bind_processor(DIALECT)(value), Vector().bind_processor(DIALECT)(value)


def test_the_text_is_pgvectors_for_floats_ints_signed_zeros_and_other_values():
    rng = random.Random(3)
    values = [
        [rng.uniform(-1, 1) for _ in range(384)],
        [1, 2, -3],
        [0.0, -0.0, 1e-300, 1e300, 0.1 + 0.2],
        [True, 2.5],
        ["1.5", "2"],  # not numbers to `array`, yet pgvector takes them: left to it
        pgvector.Vector([0.5, 0.25]),
        None,
    ]
    for value in values:
        mine, pgvectors = _both(value)
        assert mine == pgvectors


def test_a_vector_bound_again_is_written_once_even_as_another_list(monkeypatch: pytest.MonkeyPatch):
    calls: list[object] = []
    to_db = pgvector.Vector._to_db

    def counted(value: object) -> str | None:
        calls.append(value)
        return to_db(value)

    monkeypatch.setattr(pgvector.Vector, "_to_db", counted)
    process = QueryVector().bind_processor(DIALECT)
    vec = [0.1, -0.2, 0.3]
    assert process(vec) == process(list(vec)) == process([0.1, -0.2, 0.3]) == "[0.1,-0.2,0.3]"
    assert len(calls) == 1
    assert process([0.1, -0.2, 0.30000000000000004]) != process(vec)  # one bit apart is another vector
    assert process([-0.0, 1.0]) == "[-0.0,1.0]" and process([0.0, 1.0]) == "[0.0,1.0]"


def test_every_query_statement_binds_its_vector_through_the_one_remembering_type():
    """The text is remembered per type object: a statement with its own would write the vector again."""
    statements = [
        value
        for module in (retrieval, neighbourhood)
        for value in vars(module).values()
        if isinstance(value, TextClause) and "vec" in value._bindparams
    ]
    assert len(statements) >= 7
    assert all(statement._bindparams["vec"].type is QUERY_VECTOR for statement in statements)


async def test_the_database_gets_the_same_distance_through_either_type(database_url: str):
    rng = random.Random(5)
    stored, query = ([rng.uniform(-1, 1) for _ in range(16)] for _ in range(2))
    db = Database(async_url(database_url))
    try:
        async with db.connect() as conn:
            distances = []
            for vector_type in (QueryVector(), Vector(), QueryVector()):
                statement = text("SELECT CAST(:a AS vector) <=> CAST(:b AS vector)").bindparams(
                    bindparam("a", type_=vector_type), bindparam("b", type_=vector_type)
                )
                distances.append(await conn.scalar(statement, {"a": stored, "b": query}))
        assert distances[0] == distances[1] == distances[2]
    finally:
        await db.close()
