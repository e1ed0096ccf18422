"""SQL for curating the graph by hand: entity/relation reads and writes, re-keying, provenance moves,
embedding updates and the set-based expansion behind the graph view. Every statement is project-scoped."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    ARRAY,
    Text,
    and_,
    any_,
    bindparam,
    delete,
    func,
    insert,
    literal,
    or_,
    select,
    text,
    tuple_,
    update,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables import chunks, entities, entity_sources, relation_sources, relations
from app.domain.rows import (
    EdgeRow,
    EntityEmbeddingUpdate,
    EntityRow,
    NodeRow,
    RelationEmbeddingUpdate,
    RelationRow,
    RelationSource,
)

E, R = entities, relations
_SRC, _TGT = entities.alias("src_entity"), entities.alias("tgt_entity")

ENTITY_COLUMNS = (
    E.c.key,
    E.c.name,
    E.c.entity_type,
    E.c.description,
    E.c.source_ids,
    E.c.file_paths,
    E.c.degree,
    E.c.embedded_hash,
    E.c.curated,
    E.c.hand_fields,
    E.c.created_at,
    E.c.updated_at,
)
Pair = tuple[str, str]


# ----- entities -----


async def get_entities(conn: AsyncConnection, project_id: str, keys: Sequence[str]) -> dict[str, EntityRow]:
    if not keys:
        return {}
    rows = await conn.execute(select(*ENTITY_COLUMNS).where(E.c.project_id == project_id, E.c.key.in_(set(keys))))
    return {r["key"]: EntityRow.from_row(r) for r in rows.mappings()}


async def get_entity(conn: AsyncConnection, project_id: str, key: str) -> EntityRow | None:
    return (await get_entities(conn, project_id, [key])).get(key)


def _name_contains(q: str) -> Any:
    """Substring match on the key, as LIKE so a trigram index on `entities.key` (migration 0005) serves it."""
    escaped = q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return E.c.key.like(f"%{escaped}%", escape="\\")


async def list_entities(
    conn: AsyncConnection, project_id: str, *, q: str | None, entity_type: str | None, limit: int, offset: int
) -> tuple[list[EntityRow], int]:
    query = select(*ENTITY_COLUMNS, func.count().over().label("total")).where(E.c.project_id == project_id)
    if q:
        query = query.where(_name_contains(q))
    if entity_type:
        query = query.where(func.lower(E.c.entity_type) == entity_type.lower())
    query = query.order_by(E.c.degree.desc(), E.c.name, E.c.key).limit(limit).offset(offset)
    rows = (await conn.execute(query)).mappings().all()
    total = rows[0]["total"] if rows else await _count_entities(conn, project_id, q, entity_type)
    return [EntityRow.from_row(r) for r in rows], total


async def _count_entities(conn: AsyncConnection, project_id: str, q: str | None, entity_type: str | None) -> int:
    query = select(func.count()).select_from(E).where(E.c.project_id == project_id)
    if q:
        query = query.where(_name_contains(q))
    if entity_type:
        query = query.where(func.lower(E.c.entity_type) == entity_type.lower())
    return int(await conn.scalar(query) or 0)


async def insert_entity(conn: AsyncConnection, project_id: str, values: dict[str, Any]) -> None:
    await conn.execute(insert(E).values(project_id=project_id, **values))


async def update_entity(conn: AsyncConnection, project_id: str, key: str, values: dict[str, Any]) -> None:
    await conn.execute(
        update(E).where(E.c.project_id == project_id, E.c.key == key).values(**values, updated_at=func.now())
    )


async def delete_entities(conn: AsyncConnection, project_id: str, keys: Sequence[str]) -> int:
    """Relations and provenance rows go with them (foreign-key cascades)."""
    if not keys:
        return 0
    result = await conn.execute(delete(E).where(E.c.project_id == project_id, E.c.key.in_(set(keys))))
    return result.rowcount


async def entity_source_chunks(conn: AsyncConnection, project_id: str, key: str, limit: int) -> list[dict]:
    """Provenance of one entity in insertion order, with each chunk's file path."""
    es = entity_sources
    query = (
        select(es.c.chunk_id, es.c.document_id, chunks.c.file_path)
        .join(chunks, and_(chunks.c.project_id == es.c.project_id, chunks.c.id == es.c.chunk_id))
        .where(es.c.project_id == project_id, es.c.entity_key == key)
        .order_by(es.c.seq)
        .limit(limit)
    )
    return [dict(r) for r in (await conn.execute(query)).mappings()]


async def copy_entity_sources(conn: AsyncConnection, project_id: str, from_keys: Sequence[str], to_key: str) -> None:
    """Give `to_key` the provenance of `from_keys`, keeping each row's original insertion order (seq)."""
    es = entity_sources
    rows = (
        select(es.c.project_id, literal(to_key, type_=Text), es.c.chunk_id, es.c.document_id, func.min(es.c.seq))
        .where(es.c.project_id == project_id, es.c.entity_key.in_(set(from_keys)))
        .group_by(es.c.project_id, es.c.chunk_id, es.c.document_id)
    )
    await conn.execute(
        pg_insert(es)
        .from_select(["project_id", "entity_key", "chunk_id", "document_id", "seq"], rows)
        .on_conflict_do_nothing()
    )


# ----- relations -----


def _relation_select() -> Any:
    return (
        select(
            R.c.src_key,
            R.c.tgt_key,
            _SRC.c.name.label("src_name"),
            _TGT.c.name.label("tgt_name"),
            R.c.keywords,
            R.c.description,
            R.c.weight,
            R.c.source_ids,
            R.c.file_paths,
            R.c.embedded_hash,
            R.c.curated,
            R.c.hand_fields,
            R.c.created_at,
            R.c.updated_at,
        )
        .join(_SRC, and_(_SRC.c.project_id == R.c.project_id, _SRC.c.key == R.c.src_key))
        .join(_TGT, and_(_TGT.c.project_id == R.c.project_id, _TGT.c.key == R.c.tgt_key))
    )


def _touching(keys: Sequence[str]) -> Any:
    keyset = set(keys)
    return or_(R.c.src_key.in_(keyset), R.c.tgt_key.in_(keyset))


async def relations_touching(
    conn: AsyncConnection, project_id: str, keys: Sequence[str], *, limit: int | None = None, offset: int = 0
) -> list[RelationRow]:
    if not keys:
        return []
    query = (
        _relation_select()
        .where(R.c.project_id == project_id, _touching(keys))
        .order_by(R.c.weight.desc(), R.c.src_key, R.c.tgt_key)
        .offset(offset)
    )
    if limit is not None:
        query = query.limit(limit)
    return [RelationRow.from_row(r) for r in (await conn.execute(query)).mappings()]


async def count_relations(conn: AsyncConnection, project_id: str, keys: Sequence[str] | None = None) -> int:
    query = select(func.count()).select_from(R).where(R.c.project_id == project_id)
    if keys is not None:
        query = query.where(_touching(keys))
    return int(await conn.scalar(query) or 0)


async def list_relations(conn: AsyncConnection, project_id: str, *, limit: int, offset: int) -> list[RelationRow]:
    query = (
        _relation_select()
        .where(R.c.project_id == project_id)
        .order_by(R.c.weight.desc(), R.c.src_key, R.c.tgt_key)
        .limit(limit)
        .offset(offset)
    )
    return [RelationRow.from_row(r) for r in (await conn.execute(query)).mappings()]


async def relations_by_pairs(conn: AsyncConnection, project_id: str, pairs: Sequence[Pair]) -> list[RelationRow]:
    if not pairs:
        return []
    query = _relation_select().where(
        R.c.project_id == project_id, tuple_(R.c.src_key, R.c.tgt_key).in_(list(set(pairs)))
    )
    return [RelationRow.from_row(r) for r in (await conn.execute(query.order_by(R.c.src_key, R.c.tgt_key))).mappings()]


async def get_relation(conn: AsyncConnection, project_id: str, pair: Pair) -> RelationRow | None:
    rows = await relations_by_pairs(conn, project_id, [pair])
    return rows[0] if rows else None


async def insert_relations(conn: AsyncConnection, project_id: str, rows: Sequence[dict[str, Any]]) -> None:
    if rows:
        await conn.execute(insert(R), [{"project_id": project_id, **row} for row in rows])


async def update_relation(conn: AsyncConnection, project_id: str, pair: Pair, values: dict[str, Any]) -> None:
    await conn.execute(
        update(R)
        .where(R.c.project_id == project_id, R.c.src_key == pair[0], R.c.tgt_key == pair[1])
        .values(**values, updated_at=func.now())
    )


async def delete_relations(conn: AsyncConnection, project_id: str, pairs: Sequence[Pair]) -> int:
    if not pairs:
        return 0
    result = await conn.execute(
        delete(R).where(R.c.project_id == project_id, tuple_(R.c.src_key, R.c.tgt_key).in_(list(set(pairs))))
    )
    return result.rowcount


async def rekey_relations(conn: AsyncConnection, project_id: str, moves: Sequence[tuple[str, str, str, str]]) -> None:
    """Move relations (old_src, old_tgt) → (new_src, new_tgt) in one statement. Their provenance follows
    through ON UPDATE CASCADE and the degree trigger adjusts both old and new endpoints."""
    if not moves:
        return
    columns = list(zip(*moves, strict=True))
    await conn.execute(
        text(
            "UPDATE relations AS r SET src_key = m.ns, tgt_key = m.nt, updated_at = now() "
            "FROM unnest(CAST(:os AS text[]), CAST(:ot AS text[]), CAST(:ns AS text[]), CAST(:nt AS text[])) "
            "AS m(os, ot, ns, nt) WHERE r.project_id = :project_id AND r.src_key = m.os AND r.tgt_key = m.ot"
        ),
        {
            "project_id": project_id,
            "os": list(columns[0]),
            "ot": list(columns[1]),
            "ns": list(columns[2]),
            "nt": list(columns[3]),
        },
    )


async def relation_sources_of(conn: AsyncConnection, project_id: str, pairs: Sequence[Pair]) -> list[RelationSource]:
    if not pairs:
        return []
    rs = relation_sources
    query = (
        select(rs.c.src_key, rs.c.tgt_key, rs.c.chunk_id, rs.c.document_id, rs.c.seq)
        .where(rs.c.project_id == project_id, tuple_(rs.c.src_key, rs.c.tgt_key).in_(list(set(pairs))))
        .order_by(rs.c.seq)
    )
    return [RelationSource.from_row(r) for r in (await conn.execute(query)).mappings()]


async def relation_source_chunks(conn: AsyncConnection, project_id: str, pair: Pair, limit: int) -> list[dict]:
    """Provenance of one relation in insertion order, with each chunk's file path."""
    rs = relation_sources
    query = (
        select(rs.c.chunk_id, rs.c.document_id, chunks.c.file_path)
        .join(chunks, and_(chunks.c.project_id == rs.c.project_id, chunks.c.id == rs.c.chunk_id))
        .where(rs.c.project_id == project_id, rs.c.src_key == pair[0], rs.c.tgt_key == pair[1])
        .order_by(rs.c.seq)
        .limit(limit)
    )
    return [dict(r) for r in (await conn.execute(query)).mappings()]


async def insert_relation_sources(conn: AsyncConnection, project_id: str, rows: Sequence[RelationSource]) -> None:
    if rows:
        await conn.execute(
            pg_insert(relation_sources).on_conflict_do_nothing(),
            [
                {
                    "project_id": project_id,
                    "src_key": r.src_key,
                    "tgt_key": r.tgt_key,
                    "chunk_id": r.chunk_id,
                    "document_id": r.document_id,
                    "seq": r.seq,
                }
                for r in rows
            ],
        )


# ----- embeddings -----

_ENTITY_EMBED = (
    update(E)
    .where(E.c.project_id == bindparam("p_id"), E.c.key == bindparam("p_key"))
    .values(embedding=bindparam("p_vec", type_=Vector()), embedded_hash=bindparam("p_hash"))
)
_RELATION_EMBED = (
    update(R)
    .where(R.c.project_id == bindparam("p_id"), R.c.src_key == bindparam("p_src"), R.c.tgt_key == bindparam("p_tgt"))
    .values(embedding=bindparam("p_vec", type_=Vector()), embedded_hash=bindparam("p_hash"))
)


async def set_entity_embeddings(conn: AsyncConnection, project_id: str, rows: Sequence[EntityEmbeddingUpdate]) -> None:
    """Unconditionally: the caller holds the entity's lock inside the transaction that changed its text."""
    if rows:
        await conn.execute(
            _ENTITY_EMBED,
            [{"p_id": project_id, "p_key": u.key, "p_vec": u.vector, "p_hash": u.text_hash} for u in rows],
        )


async def set_relation_embeddings(
    conn: AsyncConnection, project_id: str, rows: Sequence[RelationEmbeddingUpdate]
) -> None:
    if rows:
        await conn.execute(
            _RELATION_EMBED,
            [
                {"p_id": project_id, "p_src": u.src_key, "p_tgt": u.tgt_key, "p_vec": u.vector, "p_hash": u.text_hash}
                for u in rows
            ],
        )


# ----- graph view -----

# The graph view's rows are built by position (this order is NodeRow's, as edges_among's is EdgeRow's): by name
# they cost ~10 µs each, a third of a second on the event loop for a 10,000-node view.
_NODE_COLUMNS = (E.c.key, E.c.name, E.c.entity_type, E.c.description, E.c.degree)


async def top_nodes(conn: AsyncConnection, project_id: str, limit: int) -> list[NodeRow]:
    query = select(*_NODE_COLUMNS).where(E.c.project_id == project_id).order_by(E.c.degree.desc(), E.c.key).limit(limit)
    return [NodeRow(*r) for r in await conn.execute(query)]


async def neighbour_nodes(
    conn: AsyncConnection, project_id: str, frontier: Sequence[str], visited: Sequence[str], limit: int
) -> list[NodeRow]:
    """Unvisited neighbours of the frontier, highest degree first: one breadth-first step in one query."""
    keys = bindparam("frontier", list(frontier), type_=ARRAY(Text))
    hop = (
        select(R.c.tgt_key.label("k"))
        .where(R.c.project_id == project_id, R.c.src_key == any_(keys))
        .union(select(R.c.src_key).where(R.c.project_id == project_id, R.c.tgt_key == any_(keys)))
    ).subquery()
    query = (
        select(*_NODE_COLUMNS)
        .join(hop, and_(E.c.project_id == project_id, E.c.key == hop.c.k))
        .where(~E.c.key.in_(set(visited)))
        .order_by(E.c.degree.desc(), E.c.key)
        .limit(limit)
    )
    return [NodeRow(*r) for r in await conn.execute(query)]


async def edges_among(conn: AsyncConnection, project_id: str, keys: Sequence[str]) -> list[EdgeRow]:
    keyset = bindparam("nodes", list(keys), type_=ARRAY(Text))
    query = (
        select(R.c.src_key, R.c.tgt_key, R.c.weight, R.c.keywords, R.c.description)
        .where(R.c.project_id == project_id, R.c.src_key == any_(keyset), R.c.tgt_key == any_(keyset))
        .order_by(R.c.src_key, R.c.tgt_key)
    )
    return [EdgeRow(*r) for r in await conn.execute(query)]
