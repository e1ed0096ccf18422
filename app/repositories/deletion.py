"""SQL for document deletion: the document rows under lock, its chunks and their cache keys, the cached
extraction inputs of the chunks that remain, the relations a deleted entity takes with it, and the rebuilt
rows written back.

Lists are bound as one array (`= ANY(...)`), never as an `IN` of one parameter per value: a batch deletion
reads thousands of chunks, and a statement whose text changes with the list length is compiled and
prepared again on every call (hundreds of milliseconds at 2,000 values). Rebuilt rows are written with one
UPDATE per table joined to a JSON record set, their new vectors and (entities) degrees included, so each
row is rewritten (and its vector, full-text and key indexes maintained) once, not once per field group and
once more by the degree trigger."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import bindparam, delete, or_, select, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables import chunks, documents, entity_sources, relation_sources, relations
from app.domain.rows import ChunkCacheRef, EntityEmbeddingUpdate, RelationEmbeddingUpdate
from app.repositories.graph import any_of, pair_rows

Pair = tuple[str, str]


async def lock_documents(
    conn: AsyncConnection, project_id: str, document_ids: Sequence[str], *, lock: bool = True
) -> dict[str, dict]:
    """id → status row of those documents that exist; with `lock`, locked in id order until the
    transaction ends (no worker can claim them, and two batch deletions never lock in opposite orders)."""
    query = (
        select(documents.c.id, documents.c.status, documents.c.file_path)
        .where(documents.c.project_id == project_id, documents.c.id == any_of(document_ids))
        .order_by(documents.c.id)
    )
    rows = await conn.execute(query.with_for_update() if lock else query)
    return {r["id"]: dict(r) for r in rows.mappings()}


async def keys_of_documents(
    conn: AsyncConnection, project_id: str, document_ids: Sequence[str]
) -> tuple[list[str], list[Pair]]:
    """Entity keys and relation pairs that have provenance in any of the documents (sorted)."""
    ids = any_of(document_ids)
    ents = await conn.execute(
        select(entity_sources.c.entity_key)
        .distinct()
        .where(entity_sources.c.project_id == project_id, entity_sources.c.document_id == ids)
        .order_by(entity_sources.c.entity_key)
    )
    rels = await conn.execute(
        select(relation_sources.c.src_key, relation_sources.c.tgt_key)
        .distinct()
        .where(relation_sources.c.project_id == project_id, relation_sources.c.document_id == ids)
        .order_by(relation_sources.c.src_key, relation_sources.c.tgt_key)
    )
    return [r[0] for r in ents], [(r[0], r[1]) for r in rels]


async def chunks_of_documents(
    conn: AsyncConnection, project_id: str, document_ids: Sequence[str]
) -> list[ChunkCacheRef]:
    rows = await conn.execute(
        select(chunks.c.id, chunks.c.file_path, chunks.c.extraction_cache_keys)
        .where(chunks.c.project_id == project_id, chunks.c.document_id == any_of(document_ids))
        .order_by(chunks.c.document_id, chunks.c.order_index)
    )
    return [ChunkCacheRef.from_row(r) for r in rows.mappings()]


async def chunk_rebuild_inputs(
    conn: AsyncConnection, project_id: str, chunk_ids: Sequence[str]
) -> dict[str, tuple[ChunkCacheRef, Any]]:
    """chunk id → (its cache references, its stored parsed records or None), for the given chunks."""
    if not chunk_ids:
        return {}
    rows = await conn.execute(
        select(chunks.c.id, chunks.c.file_path, chunks.c.extraction_cache_keys, chunks.c.extraction_records).where(
            chunks.c.project_id == project_id, chunks.c.id == any_of(set(chunk_ids))
        )
    )
    return {r["id"]: (ChunkCacheRef.from_row(r), r["extraction_records"]) for r in rows.mappings()}


async def pairs_touching(conn: AsyncConnection, project_id: str, keys: Sequence[str]) -> list[Pair]:
    if not keys:
        return []
    keyset = any_of(set(keys))
    rows = await conn.execute(
        select(relations.c.src_key, relations.c.tgt_key).where(
            relations.c.project_id == project_id, or_(relations.c.src_key == keyset, relations.c.tgt_key == keyset)
        )
    )
    return [(r[0], r[1]) for r in rows]


async def delete_relations(conn: AsyncConnection, project_id: str, pairs: Sequence[Pair]) -> None:
    """Delete the relations of these pairs (provenance cascades), joined on the primary key."""
    if not pairs:
        return
    wanted = pair_rows(pairs)
    await conn.execute(
        delete(relations).where(
            relations.c.project_id == project_id, relations.c.src_key == wanted.c.s, relations.c.tgt_key == wanted.c.t
        )
    )


async def delete_documents(conn: AsyncConnection, project_id: str, document_ids: Sequence[str]) -> None:
    """Chunks and every provenance row pointing at them go with them (foreign-key cascades)."""
    await conn.execute(
        delete(documents).where(documents.c.project_id == project_id, documents.c.id == any_of(document_ids))
    )


# The degree of entity `e` counted from `relations` (a self-loop counts twice, as the degree trigger counts it).
_DEGREE = """(SELECT count(*) FROM relations x WHERE x.project_id = e.project_id AND x.src_key = e.key)
          + (SELECT count(*) FROM relations x WHERE x.project_id = e.project_id AND x.tgt_key = e.key)"""

_REBUILT_ENTITIES = text(f"""
UPDATE entities e
   SET entity_type = r.entity_type, description = r.description, source_ids = r.source_ids,
       file_paths = r.file_paths, truncate = r.truncate, updated_at = now(), degree = {_DEGREE},
       embedding = CASE WHEN r.vector IS NULL THEN e.embedding ELSE CAST(r.vector AS vector) END,
       embedded_hash = CASE WHEN r.vector IS NULL THEN e.embedded_hash ELSE r.embedded_hash END
  FROM jsonb_to_recordset(:rows) AS r(key text, entity_type text, description text, source_ids text[],
                                      file_paths text[], truncate text, vector text, embedded_hash text)
 WHERE e.project_id = :project_id AND e.key = r.key
""").bindparams(bindparam("rows", type_=JSONB))

_REBUILT_RELATIONS = text("""
UPDATE relations x
   SET keywords = r.keywords, description = r.description, weight = r.weight, source_ids = r.source_ids,
       file_paths = r.file_paths, truncate = r.truncate, updated_at = now(),
       embedding = CASE WHEN r.vector IS NULL THEN x.embedding ELSE CAST(r.vector AS vector) END,
       embedded_hash = CASE WHEN r.vector IS NULL THEN x.embedded_hash ELSE r.embedded_hash END
  FROM jsonb_to_recordset(:rows) AS r(src_key text, tgt_key text, keywords text, description text,
                                      weight float8, source_ids text[], file_paths text[], truncate text,
                                      vector text, embedded_hash text)
 WHERE x.project_id = :project_id AND x.src_key = r.src_key AND x.tgt_key = r.tgt_key
""").bindparams(bindparam("rows", type_=JSONB))


def _vector_text(vector: Sequence[float]) -> str:
    """pgvector's text form; repr keeps every float exact."""
    return "[" + ",".join(map(repr, vector)) + "]"


_RECOUNTED_DEGREES = text(f"""
UPDATE entities e SET degree = {_DEGREE}
 WHERE e.project_id = :project_id AND e.key = ANY(CAST(:keys AS text[])) AND e.degree <> {_DEGREE}
""")


async def set_degrees_here(conn: AsyncConnection) -> None:
    """For the rest of this transaction the degree trigger leaves degrees alone (migration 0010): the caller
    writes them, with `update_rebuilt_entities` and `recount_degrees`, once per entity row."""
    await conn.execute(text("SET LOCAL lightrag.degrees_by_caller = 'on'"))


async def recount_degrees(conn: AsyncConnection, project_id: str, keys: Iterable[str]) -> None:
    """Set the degree of these entities to their number of relation ends (rows already right are not rewritten)."""
    keys = sorted(set(keys))
    if keys:
        await conn.execute(_RECOUNTED_DEGREES, {"project_id": project_id, "keys": keys})


async def update_rebuilt_entities(
    conn: AsyncConnection, project_id: str, rows: Sequence[dict[str, Any]], vectors: Sequence[EntityEmbeddingUpdate]
) -> None:
    """Write rebuilt entities (locked and present: a deletion never creates one) in one statement: each row's
    entity_type, description, source_ids, file_paths and truncate, its degree counted from `relations`, and its
    new vector where `vectors` has one (computed from that very description; the display name is never
    changed)."""
    if not rows:
        return
    by_key = {v.key: v for v in vectors}
    payload = []
    for r in sorted(rows, key=lambda r: r["key"]):
        v = by_key.get(r["key"])
        if v is not None and v.description != r["description"]:
            v = None  # compare-and-set, as set_entity_embeddings: a vector of another text is not stored
        payload.append(
            {
                "key": r["key"],
                "entity_type": r["entity_type"],
                "description": r["description"],
                "source_ids": r["source_ids"],
                "file_paths": r["file_paths"],
                "truncate": r["truncate"],
                "vector": _vector_text(v.vector) if v else None,
                "embedded_hash": v.text_hash if v else None,
            }
        )
    await conn.execute(_REBUILT_ENTITIES, {"rows": payload, "project_id": project_id})


async def update_rebuilt_relations(
    conn: AsyncConnection, project_id: str, rows: Sequence[dict[str, Any]], vectors: Sequence[RelationEmbeddingUpdate]
) -> None:
    """Write rebuilt relations (present, endpoints locked) in one statement, new vectors included."""
    if not rows:
        return
    by_pair = {(v.src_key, v.tgt_key): v for v in vectors}
    payload = []
    for r in sorted(rows, key=lambda r: (r["src_key"], r["tgt_key"])):
        v = by_pair.get((r["src_key"], r["tgt_key"]))
        if v is not None and (v.description, v.keywords) != (r["description"], r["keywords"]):
            v = None
        payload.append(
            {
                "src_key": r["src_key"],
                "tgt_key": r["tgt_key"],
                "keywords": r["keywords"],
                "description": r["description"],
                "weight": r["weight"],
                "source_ids": r["source_ids"],
                "file_paths": r["file_paths"],
                "truncate": r["truncate"],
                "vector": _vector_text(v.vector) if v else None,
                "embedded_hash": v.text_hash if v else None,
            }
        )
    await conn.execute(_REBUILT_RELATIONS, {"rows": payload, "project_id": project_id})
