"""SQL for graph export: one consistent read snapshot, rows read in keyset-paginated batches.

Nothing here loads a whole table: each batch is one `LIMIT n` query resuming after the last key of the
previous batch, so memory is bounded by the batch size whatever the project size. Vectors are read as
pgvector's text form (`[1,2,3]`), which already is a JSON array: no numpy, no float re-formatting.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import Select, Text, cast, func, select, tuple_
from sqlalchemy.engine import RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.engine import Database
from app.db.tables import chunks, entities, relations

BATCH_SIZE = 1000


@asynccontextmanager
async def snapshot(db: Database) -> AsyncIterator[AsyncConnection]:
    """A read-only REPEATABLE READ transaction: every batch of one export sees the same database state."""
    async with db.connect() as conn:
        conn = await conn.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
        async with conn.begin():
            yield conn


async def counts(conn: AsyncConnection, project_id: str) -> dict[str, int]:
    def count(table: Any) -> Any:
        return select(func.count()).select_from(table).where(table.c.project_id == project_id).scalar_subquery()

    row = (await conn.execute(select(
        count(entities).label("entities"), count(relations).label("relations"), count(chunks).label("chunks"),
    ))).mappings().one()
    return dict(row)


async def _keyset(
    conn: AsyncConnection,
    query: Select,
    order: Sequence[Any],
    last_of: Callable[[RowMapping], tuple],
    batch_size: int,
) -> AsyncIterator[list[RowMapping]]:
    """Yield batches of `query` ordered by the unique `order` columns, each resuming after the previous one."""
    last: tuple | None = None
    while True:
        page = query.order_by(*order).limit(batch_size)
        if last is not None:
            page = page.where(tuple_(*order) > tuple_(*last))
        rows = list((await conn.execute(page)).mappings())
        if rows:
            yield rows
        if len(rows) < batch_size:
            return
        last = last_of(rows[-1])


def _vector(column: Any) -> Any:
    return cast(column, Text).label("vector")


def entity_batches(
    conn: AsyncConnection, project_id: str, *, vectors: bool, batch_size: int = BATCH_SIZE
) -> AsyncIterator[list[RowMapping]]:
    e = entities.c
    cols = [e.key, e.name, e.entity_type, e.description, e.source_ids, e.file_paths, e.degree]
    query = select(*cols, *([_vector(e.embedding)] if vectors else [])).where(e.project_id == project_id)
    return _keyset(conn, query, [e.key], lambda r: (r["key"],), batch_size)


def relation_batches(
    conn: AsyncConnection, project_id: str, *, vectors: bool, batch_size: int = BATCH_SIZE
) -> AsyncIterator[list[RowMapping]]:
    """Each undirected relation once (stored sorted), with both endpoints' display names.

    The names come from correlated lookups evaluated only for the rows of the page: a join would let the
    planner merge-join the whole entity index from its start on every page (quadratic over the export)."""
    r = relations.c

    def name_of(key: Any, label: str) -> Any:
        e = entities.alias()
        return (select(e.c.name).where(e.c.project_id == r.project_id, e.c.key == key)
                .scalar_subquery().label(label))

    cols = [r.src_key, r.tgt_key, name_of(r.src_key, "source"), name_of(r.tgt_key, "target"), r.keywords,
            r.description, r.weight, r.source_ids, r.file_paths]
    query = select(*cols, *([_vector(r.embedding)] if vectors else [])).where(r.project_id == project_id)
    return _keyset(conn, query, [r.src_key, r.tgt_key], lambda row: (row["src_key"], row["tgt_key"]), batch_size)


def chunk_batches(
    conn: AsyncConnection, project_id: str, *, vectors: bool, batch_size: int = BATCH_SIZE
) -> AsyncIterator[list[RowMapping]]:
    """Chunks grouped by document, in document order (the id breaks ties, so the keyset is unique)."""
    c = chunks.c
    cols = [c.id, c.document_id, c.order_index, c.tokens, c.content, c.file_path]
    query = select(*cols, *([_vector(c.embedding)] if vectors else [])).where(c.project_id == project_id)
    return _keyset(
        conn, query, [c.document_id, c.order_index, c.id],
        lambda r: (r["document_id"], r["order_index"], r["id"]), batch_size,
    )
