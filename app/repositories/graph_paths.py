"""The edges around a set of entities, for walking the graph one hop at a time (services/graph/paths.py)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import ARRAY, Text, any_, bindparam, select
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables import relations as R


async def edges_touching(
    conn: AsyncConnection, project_id: str, frontier: Sequence[str], limit: int
) -> list[tuple[str, str]]:
    """(source key, target key) of up to `limit` relations with an end in `frontier`, heaviest first."""
    keys = bindparam("frontier", list(frontier), type_=ARRAY(Text))
    query = (
        select(R.c.src_key, R.c.tgt_key)
        .where(R.c.project_id == project_id, (R.c.src_key == any_(keys)) | (R.c.tgt_key == any_(keys)))
        .order_by(R.c.weight.desc(), R.c.src_key, R.c.tgt_key)
        .limit(limit)
    )
    return [(src, tgt) for src, tgt in await conn.execute(query)]
