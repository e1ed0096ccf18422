"""SQL for entities, relations and their provenance: locks, set-based reads, bulk upserts.

Generic on purpose: ingestion merge, deletion rebuild and curation all read and write through these.
Entities are keyed by (project_id, key); relations by (project_id, src_key, tgt_key) with src_key < tgt_key.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Text, and_, any_, bindparam, cast, func, select, text, update
from sqlalchemy.dialects.postgresql import ARRAY, aggregate_order_by
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.selectable import TableValuedAlias

from app.db.tables import entities, entity_sources, relation_sources, relations
from app.domain.rows import EntityEmbeddingUpdate, EntityRow, RelationEmbeddingUpdate, RelationRow

Pair = tuple[str, str]

_ENTITY_FIELDS = ("name", "entity_type", "description", "source_ids", "file_paths", "truncate")
_RELATION_FIELDS = ("keywords", "description", "weight", "source_ids", "file_paths", "truncate")


def any_of(values: Iterable[str]) -> ColumnElement:
    """`column == any_of(values)`: the values bound as one text array. An `IN` binds one parameter per value,
    so its statement text, compiled and prepared anew, changes with every list length."""
    return any_(cast(list(values), ARRAY(Text)))


async def lock_keys(conn: AsyncConnection, project_id: str, keys: Iterable[str]) -> None:
    """Transaction-scoped advisory locks on entity keys, taken in one global order (no deadlocks).

    Relations are protected by locking both endpoint keys. Callers must pass every key they will write.
    """
    unique = sorted(set(keys))
    if not unique:
        return
    await conn.execute(
        text(
            "SELECT pg_advisory_xact_lock(h) FROM ("
            " SELECT DISTINCT hashtext(:project_id || ':' || k) AS h FROM unnest(CAST(:keys AS text[])) AS k"
            " ORDER BY h OFFSET 0) AS ordered"
        ),
        {"project_id": project_id, "keys": unique},
    )


async def fetch_entities(
    conn: AsyncConnection, project_id: str, keys: Sequence[str], *, with_sources: bool = True
) -> dict[str, EntityRow]:
    """Entity rows by key (without the embedding), each with `sources`: its full provenance in insertion order."""
    if not keys:
        return {}
    cols = [c for c in entities.c if c.name not in ("embedding", "search_vector")]
    rows = (
        (
            await conn.execute(
                select(*cols).where(entities.c.project_id == project_id, entities.c.key == any_of(set(keys)))
            )
        )
        .mappings()
        .all()
    )
    found: dict[str, list[str]] = {}
    if rows and with_sources:
        es = entity_sources.c
        # one array per entity, not one row per source: hub entities have hundreds of sources
        found = {
            key: list(sources)
            for key, sources in (
                await conn.execute(
                    select(es.entity_key, func.array_agg(aggregate_order_by(es.chunk_id, es.seq)))
                    .where(es.project_id == project_id, es.entity_key == any_of(r["key"] for r in rows))
                    .group_by(es.entity_key)
                )
            ).all()
        }
    return {r["key"]: EntityRow.from_row(r, sources=found.get(r["key"], [])) for r in rows}


def pair_rows(pairs: Iterable[Pair], name: str = "pairs") -> TableValuedAlias:
    """The pairs as a joinable table (`s`, `t`): PostgreSQL turns `(src_key, tgt_key) IN (...)` into one OR
    term per pair checked against every relation of the project; a join uses the primary key."""
    unique = sorted(set(pairs))
    return (
        func.unnest(cast([s for s, _ in unique], ARRAY(Text)), cast([t for _, t in unique], ARRAY(Text)))
        .table_valued("s", "t")
        .render_derived(name=name)
    )


async def fetch_relations(
    conn: AsyncConnection, project_id: str, pairs: Sequence[Pair], *, with_sources: bool = True
) -> dict[Pair, RelationRow]:
    """Relation rows by sorted pair (without the embedding), with the endpoints' display names
    (`src_name`, `tgt_name`) and `sources`: full provenance in insertion order."""
    if not pairs:
        return {}
    src, tgt = entities.alias("src"), entities.alias("tgt")
    cols = [c for c in relations.c if c.name not in ("embedding", "search_vector")]
    wanted = pair_rows(pairs)
    query = (
        select(*cols, src.c.name.label("src_name"), tgt.c.name.label("tgt_name"))
        .join(wanted, and_(relations.c.src_key == wanted.c.s, relations.c.tgt_key == wanted.c.t))
        .join(src, and_(src.c.project_id == relations.c.project_id, src.c.key == relations.c.src_key))
        .join(tgt, and_(tgt.c.project_id == relations.c.project_id, tgt.c.key == relations.c.tgt_key))
        .where(relations.c.project_id == project_id)
    )
    rows = {(r["src_key"], r["tgt_key"]): r for r in (await conn.execute(query)).mappings().all()}
    found: dict[Pair, list[str]] = {}
    if rows and with_sources:
        rs = relation_sources.c
        found_pairs = pair_rows(rows)
        found = {
            (s, t): list(sources)
            for s, t, sources in (
                await conn.execute(
                    select(rs.src_key, rs.tgt_key, func.array_agg(aggregate_order_by(rs.chunk_id, rs.seq)))
                    .join(found_pairs, and_(rs.src_key == found_pairs.c.s, rs.tgt_key == found_pairs.c.t))
                    .where(rs.project_id == project_id)
                    .group_by(rs.src_key, rs.tgt_key)
                )
            ).all()
        }
    return {pair: RelationRow.from_row(r, sources=found.get(pair, [])) for pair, r in rows.items()}


async def upsert_entities(conn: AsyncConnection, project_id: str, rows: Sequence[dict[str, Any]]) -> None:
    """Insert or update entities by key. Each row: key plus any of name, entity_type, description,
    source_ids, file_paths, truncate. An existing entity keeps its first-seen display name."""
    if not rows:
        return
    values = [{"project_id": project_id, **r} for r in sorted(rows, key=lambda r: r["key"])]
    stmt = pg_insert(entities)
    present = [f for f in _ENTITY_FIELDS if f in values[0] and f != "name"]
    updates: dict[str, Any] = {f: stmt.excluded[f] for f in present}
    updates["updated_at"] = func.now()
    # executemany: SQLAlchemy batches the rows into multi-row statements with one cached compilation
    await conn.execute(stmt.on_conflict_do_update(index_elements=["project_id", "key"], set_=updates), values)


async def upsert_relations(conn: AsyncConnection, project_id: str, rows: Sequence[dict[str, Any]]) -> None:
    """Insert or update relations by sorted pair. Each row: src_key, tgt_key (src_key < tgt_key) plus any
    of keywords, description, weight, source_ids, file_paths, truncate. Both endpoints must exist."""
    if not rows:
        return
    values = [{"project_id": project_id, **r} for r in sorted(rows, key=lambda r: (r["src_key"], r["tgt_key"]))]
    stmt = pg_insert(relations)
    present = [f for f in _RELATION_FIELDS if f in values[0]]
    updates: dict[str, Any] = {f: stmt.excluded[f] for f in present}
    updates["updated_at"] = func.now()
    await conn.execute(
        stmt.on_conflict_do_update(index_elements=["project_id", "src_key", "tgt_key"], set_=updates), values
    )


# WITH ORDINALITY ... ORDER BY: the rows take their `seq` (provenance order) in the order given
_ENTITY_SOURCES = text("""
INSERT INTO entity_sources (project_id, entity_key, chunk_id, document_id)
SELECT :project_id, u.k, u.c, u.d
  FROM unnest(CAST(:keys AS text[]), CAST(:chunks AS text[]), CAST(:documents AS text[])) WITH ORDINALITY
       AS u(k, c, d, n)
 ORDER BY u.n
    ON CONFLICT DO NOTHING
""")

_RELATION_SOURCES = text("""
INSERT INTO relation_sources (project_id, src_key, tgt_key, chunk_id, document_id)
SELECT :project_id, u.s, u.t, u.c, u.d
  FROM unnest(CAST(:srcs AS text[]), CAST(:tgts AS text[]), CAST(:chunks AS text[]), CAST(:documents AS text[]))
       WITH ORDINALITY AS u(s, t, c, d, n)
 ORDER BY u.n
    ON CONFLICT DO NOTHING
""")


async def add_entity_sources(conn: AsyncConnection, project_id: str, rows: Sequence[tuple[str, str, str]]) -> None:
    """Provenance rows (entity_key, chunk_id, document_id), in the given order (their `seq`), in one statement;
    existing ones are kept."""
    if not rows:
        return
    keys, chunk_ids, document_ids = (list(col) for col in zip(*rows, strict=True))
    await conn.execute(
        _ENTITY_SOURCES, {"project_id": project_id, "keys": keys, "chunks": chunk_ids, "documents": document_ids}
    )


async def add_relation_sources(
    conn: AsyncConnection, project_id: str, rows: Sequence[tuple[str, str, str, str]]
) -> None:
    """Provenance rows (src_key, tgt_key, chunk_id, document_id), in the given order (their `seq`), in one
    statement; existing ones are kept."""
    if not rows:
        return
    srcs, tgts, chunk_ids, document_ids = (list(col) for col in zip(*rows, strict=True))
    await conn.execute(
        _RELATION_SOURCES,
        {"project_id": project_id, "srcs": srcs, "tgts": tgts, "chunks": chunk_ids, "documents": document_ids},
    )


async def keys_of_document(conn: AsyncConnection, project_id: str, document_id: str) -> tuple[list[str], list[Pair]]:
    """Entity keys and relation pairs that have provenance in the document (sorted)."""
    ents = await conn.execute(
        select(entity_sources.c.entity_key)
        .distinct()
        .where(entity_sources.c.project_id == project_id, entity_sources.c.document_id == document_id)
        .order_by(entity_sources.c.entity_key)
    )
    rels = await conn.execute(
        select(relation_sources.c.src_key, relation_sources.c.tgt_key)
        .distinct()
        .where(relation_sources.c.project_id == project_id, relation_sources.c.document_id == document_id)
        .order_by(relation_sources.c.src_key, relation_sources.c.tgt_key)
    )
    return [r[0] for r in ents], [(r[0], r[1]) for r in rels]


async def set_entity_descriptions(conn: AsyncConnection, project_id: str, rows: Sequence[tuple[str, str, str]]) -> int:
    """Compare-and-set (key, expected_description, new_description): rows changed since are left alone."""
    if not rows:
        return 0
    stmt = (
        update(entities)
        .where(
            entities.c.project_id == project_id,
            entities.c.key == bindparam("k"),
            entities.c.description == bindparam("expected"),
        )
        .values(description=bindparam("new"), updated_at=func.now())
    )
    result = await conn.execute(stmt, [{"k": k, "expected": e, "new": n} for k, e, n in rows])
    return result.rowcount or 0


async def set_relation_descriptions(
    conn: AsyncConnection, project_id: str, rows: Sequence[tuple[str, str, str, str]]
) -> int:
    """Compare-and-set (src_key, tgt_key, expected_description, new_description)."""
    if not rows:
        return 0
    stmt = (
        update(relations)
        .where(
            relations.c.project_id == project_id,
            relations.c.src_key == bindparam("s"),
            relations.c.tgt_key == bindparam("t"),
            relations.c.description == bindparam("expected"),
        )
        .values(description=bindparam("new"), updated_at=func.now())
    )
    result = await conn.execute(stmt, [{"s": s, "t": t, "expected": e, "new": n} for s, t, e, n in rows])
    return result.rowcount or 0


async def lock_rows_free_now(
    conn: AsyncConnection, project_id: str, keys: Sequence[str], pairs: Sequence[Pair]
) -> tuple[set[str], set[Pair]]:
    """Inside a transaction: row-lock the entities and relations no other transaction holds, never waiting
    (`FOR NO KEY UPDATE SKIP LOCKED`); the keys and pairs locked. Missing rows are not returned."""
    free_keys: set[str] = set()
    free_pairs: set[Pair] = set()
    if keys:
        rows = await conn.execute(
            select(entities.c.key)
            .where(entities.c.project_id == project_id, entities.c.key == any_of(set(keys)))
            .order_by(entities.c.key)
            .with_for_update(key_share=True, skip_locked=True)
        )
        free_keys = {r[0] for r in rows}
    if pairs:
        wanted = pair_rows(pairs)
        rows = await conn.execute(
            select(relations.c.src_key, relations.c.tgt_key)
            .join(wanted, and_(relations.c.src_key == wanted.c.s, relations.c.tgt_key == wanted.c.t))
            .where(relations.c.project_id == project_id)
            .order_by(relations.c.src_key, relations.c.tgt_key)
            .with_for_update(of=relations, key_share=True, skip_locked=True)
        )
        free_pairs = {(r[0], r[1]) for r in rows}
    return free_keys, free_pairs


async def set_entity_embeddings(conn: AsyncConnection, project_id: str, rows: Sequence[EntityEmbeddingUpdate]) -> None:
    """Each vector is stored only if the entity's description is still the one it was computed from."""
    if not rows:
        return
    stmt = (
        update(entities)
        .where(
            entities.c.project_id == project_id,
            entities.c.key == bindparam("k"),
            entities.c.description == bindparam("d"),
        )
        .values(embedding=bindparam("v", type_=entities.c.embedding.type), embedded_hash=bindparam("h"))
    )
    await conn.execute(stmt, [{"k": u.key, "d": u.description, "v": u.vector, "h": u.text_hash} for u in rows])


async def set_relation_embeddings(
    conn: AsyncConnection, project_id: str, rows: Sequence[RelationEmbeddingUpdate]
) -> None:
    """Compare-and-set on the description and keywords each vector was computed from."""
    if not rows:
        return
    stmt = (
        update(relations)
        .where(
            relations.c.project_id == project_id,
            relations.c.src_key == bindparam("s"),
            relations.c.tgt_key == bindparam("t"),
            relations.c.description == bindparam("d"),
            relations.c.keywords == bindparam("kw"),
        )
        .values(embedding=bindparam("v", type_=relations.c.embedding.type), embedded_hash=bindparam("h"))
    )
    await conn.execute(
        stmt,
        [
            {"s": u.src_key, "t": u.tgt_key, "d": u.description, "kw": u.keywords, "v": u.vector, "h": u.text_hash}
            for u in rows
        ],
    )


async def document_graph_counts(
    conn: AsyncConnection, project_id: str, document_ids: Sequence[str]
) -> dict[str, tuple[int, int]]:
    """document_id → (distinct entities, distinct relations) it contributed to."""
    if not document_ids:
        return {}
    es, rs = entity_sources.c, relation_sources.c
    ent: dict[str, int] = dict(
        (
            await conn.execute(
                select(es.document_id, func.count(func.distinct(es.entity_key)))
                .where(es.project_id == project_id, es.document_id.in_(list(document_ids)))
                .group_by(es.document_id)
            )
        ).all()
    )
    rel: dict[str, int] = dict(
        (
            await conn.execute(
                select(rs.document_id, func.count(func.distinct(func.concat(rs.src_key, "\x1f", rs.tgt_key))))
                .where(rs.project_id == project_id, rs.document_id.in_(list(document_ids)))
                .group_by(rs.document_id)
            )
        ).all()
    )
    return {d: (int(ent.get(d, 0)), int(rel.get(d, 0))) for d in document_ids}
