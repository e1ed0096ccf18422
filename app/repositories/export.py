"""SQL for graph export: rows read in keyset-paginated batches, each batch on a briefly borrowed connection.

Nothing here loads a whole table: each batch is one `LIMIT n` query resuming after the last key of the
previous batch, so memory is bounded by the batch size whatever the project size. The pooled connection is
returned before a batch is handed on, so a client reading the download slowly (or not at all) never holds
one. The price: batches are not one snapshot. Each batch is consistent, the keyset yields every row at most
once and every row that exists for the whole export exactly once; a row written or deleted mid-export appears
only if its key is still ahead of the cursor. Vectors are read as pgvector's text form (`[1,2,3]`), which
already is a JSON array: no numpy, no float re-formatting.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from sqlalchemy import Select, Text, cast, func, select, tuple_
from sqlalchemy.engine import RowMapping

from app.db.engine import Database
from app.db.tables import chunks, entities, entity_aliases, relations
from app.domain.resolution import MATCH_INDEX

BATCH_SIZE = 1000


async def counts(db: Database, project_id: str) -> dict[str, int]:
    """Row counts when the export starts (the header of md, txt and json)."""

    def count(table: Any) -> Any:
        return select(func.count()).select_from(table).where(table.c.project_id == project_id).scalar_subquery()

    query = select(
        count(entities).label("entities"),
        count(relations).label("relations"),
        count(chunks).label("chunks"),
    )
    async with db.read() as conn:
        return dict((await conn.execute(query)).mappings().one())


async def _keyset(
    db: Database,
    query: Select,
    order: Sequence[Any],
    last_of: Callable[[RowMapping], tuple],
    batch_size: int,
) -> AsyncIterator[list[RowMapping]]:
    """Yield batches of `query` ordered by the unique `order` columns, each resuming after the previous one.

    The connection goes back to the pool before the batch is yielded: the consumer may wait on a socket."""
    last: tuple | None = None
    while True:
        page = query.order_by(*order).limit(batch_size)
        if last is not None:
            page = page.where(tuple_(*order) > tuple_(*last))
        async with db.read() as conn:
            rows = list((await conn.execute(page)).mappings())
        if rows:
            yield rows
        if len(rows) < batch_size:
            return
        last = last_of(rows[-1])


def _vector(column: Any) -> Any:
    return cast(column, Text).label("vector")


def _aliases_of(key: Any) -> Any:
    """The entity's alias names, each once (a name may be stored project-wide and per document), in order
    of first appearance: `ARRAY(SELECT …)` evaluated for the rows of a page only, like the relation names."""
    a = entity_aliases.c
    names = (
        select(a.alias_name)
        .where(a.project_id == entities.c.project_id, a.entity_key == key, ~a.alias_key.startswith(MATCH_INDEX))
        .group_by(a.alias_name)
        .order_by(func.min(a.created_at), a.alias_name)
    )
    return func.array(names.scalar_subquery()).label("aliases")


def entity_batches(
    db: Database, project_id: str, *, vectors: bool, batch_size: int = BATCH_SIZE
) -> AsyncIterator[list[RowMapping]]:
    e = entities.c
    cols = [e.key, e.name, e.entity_type, _aliases_of(e.key), e.description, e.source_ids, e.file_paths, e.degree]
    query = select(*cols, *([_vector(e.embedding)] if vectors else [])).where(e.project_id == project_id)
    return _keyset(db, query, [e.key], lambda r: (r["key"],), batch_size)


def relation_batches(
    db: Database, project_id: str, *, vectors: bool, batch_size: int = BATCH_SIZE
) -> AsyncIterator[list[RowMapping]]:
    """Each undirected relation once (stored sorted), with both endpoints' display names.

    The names come from correlated lookups evaluated only for the rows of the page: a join would let the
    planner merge-join the whole entity index from its start on every page (quadratic over the export)."""
    r = relations.c

    def name_of(key: Any, label: str) -> Any:
        e = entities.alias()
        return select(e.c.name).where(e.c.project_id == r.project_id, e.c.key == key).scalar_subquery().label(label)

    cols = [
        r.src_key,
        r.tgt_key,
        name_of(r.src_key, "source"),
        name_of(r.tgt_key, "target"),
        r.keywords,
        r.description,
        r.weight,
        r.source_ids,
        r.file_paths,
    ]
    query = select(*cols, *([_vector(r.embedding)] if vectors else [])).where(r.project_id == project_id)
    return _keyset(db, query, [r.src_key, r.tgt_key], lambda row: (row["src_key"], row["tgt_key"]), batch_size)


def chunk_batches(
    db: Database, project_id: str, *, vectors: bool, batch_size: int = BATCH_SIZE
) -> AsyncIterator[list[RowMapping]]:
    """Chunks grouped by document, in document order (the id breaks ties, so the keyset is unique)."""
    c = chunks.c
    cols = [c.id, c.document_id, c.order_index, c.tokens, c.content, c.file_path]
    query = select(*cols, *([_vector(c.embedding)] if vectors else [])).where(c.project_id == project_id)
    return _keyset(
        db,
        query,
        [c.document_id, c.order_index, c.id],
        lambda r: (r["document_id"], r["order_index"], r["id"]),
        batch_size,
    )
