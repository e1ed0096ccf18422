"""SQL for the LLM response cache. Only answers are stored, never prompts: prompts hold whole chunks and
would double the storage."""

from __future__ import annotations

from sqlalchemy import and_, delete, exists, func, select
from sqlalchemy.dialects.postgresql import array
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables import chunks, llm_cache


async def get(conn: AsyncConnection, project_id: str, key: str) -> dict | None:
    row = (
        (await conn.execute(select(llm_cache).where(llm_cache.c.project_id == project_id, llm_cache.c.key == key)))
        .mappings()
        .first()
    )
    return dict(row) if row else None


async def get_many(conn: AsyncConnection, project_id: str, keys: list[str]) -> dict[str, dict]:
    if not keys:
        return {}
    rows = (
        await conn.execute(
            select(llm_cache).where(llm_cache.c.project_id == project_id, llm_cache.c.key.in_(set(keys)))
        )
    ).mappings()
    return {row["key"]: dict(row) for row in rows}


def _put_statement():
    stmt = pg_insert(llm_cache)
    excluded = stmt.excluded
    return stmt.on_conflict_do_update(
        index_elements=[llm_cache.c.project_id, llm_cache.c.key],
        set_={
            "cache_type": excluded.cache_type,
            "model": excluded.model,
            "response": excluded.response,
            "prompt_tokens": excluded.prompt_tokens,
            "completion_tokens": excluded.completion_tokens,
            "created_at": func.now(),
        },
        where=llm_cache.c.response.is_distinct_from(excluded.response)
        | llm_cache.c.cache_type.is_distinct_from(excluded.cache_type)
        | llm_cache.c.model.is_distinct_from(excluded.model),
    )


# built once: constructing it per call was ~5% of ingestion CPU with an instant LLM (py-spy)
_PUT = _put_statement()


async def put_many(conn: AsyncConnection, project_id: str, rows: list[dict]) -> None:
    """Insert or replace rows (key, cache_type, model, response, prompt_tokens, completion_tokens) in one
    statement; a row that already holds the same answer is left untouched. Key order, so concurrent
    writers of overlapping keys lock rows in the same order."""
    if not rows:
        return
    unique = {r["key"]: r for r in rows}  # one statement may not touch a row twice
    await conn.execute(_PUT, [{"project_id": project_id, **unique[k]} for k in sorted(unique)])


async def delete_unreferenced(conn: AsyncConnection, project_id: str, keys: list[str]) -> int:
    """Delete those of `keys` that no remaining chunk of the project lists in its extraction_cache_keys."""
    if not keys:
        return 0
    referenced = exists().where(
        and_(
            chunks.c.project_id == project_id,
            chunks.c.extraction_cache_keys.overlap(array([llm_cache.c.key])),  # GIN-indexed
        )
    )
    result = await conn.execute(
        delete(llm_cache).where(
            llm_cache.c.project_id == project_id,
            llm_cache.c.key.in_(set(keys)),
            ~referenced,
        )
    )
    return result.rowcount


async def delete_types(conn: AsyncConnection, project_id: str, cache_types: list[str]) -> int:
    """Delete the project's cached answers of these types (e.g. query keywords and answers); returns how many."""
    result = await conn.execute(
        delete(llm_cache).where(llm_cache.c.project_id == project_id, llm_cache.c.cache_type.in_(cache_types))
    )
    return result.rowcount or 0
