"""All SQL of query-time retrieval: vector searches, graph neighbourhoods, provenance, chunk rows.

Every statement is set-based and filtered by project. Vector searches run in a transaction that sets
`hnsw.iterative_scan = relaxed_order` and `hnsw.ef_search` locally, so the HNSW index (shared by all
projects) keeps scanning until enough rows of *this* project are found (a plain HNSW scan
returns ef_search candidates, of which few may belong to a small project). The
distance threshold is applied outside a materialized CTE, as pgvector recommends for iterative scans.

Only the chunks of `processed` documents are retrieved, by every path (vector, full text, graph provenance):
a pending, processing, cancelled or failed document may hold embedded chunks (they are embedded while it is
extracted, and kept for its retry) that must not answer questions.
"""

from __future__ import annotations

import re
from array import array
from functools import lru_cache
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.types import Text

from app.domain.hits import ChunkHit, EntityHit, RelationHit


class QueryVector(Vector):
    """pgvector's column type for a bound query vector, its text form remembered: one query binds the same
    vector to up to five statements, and writing 384 floats as text took about 0.6 ms each time. Remembered
    per type object (SQLAlchemy keeps one bind processor per type and dialect), so every query statement
    binds `QUERY_VECTOR`; only the last few vectors are kept: enough for a few queries at once (each has up
    to three), too few for a question asked again after others to find its text still there."""

    cache_ok = True

    def bind_processor(self, dialect: Any) -> Any:
        convert = super().bind_processor(dialect)
        # keyed by the exact doubles: the text is a function of them alone (-0.0 and 0.0 differ in both)
        text_of = lru_cache(maxsize=8)(lambda doubles: convert(array("d", doubles).tolist()))

        def process(value: Any) -> Any:
            try:
                doubles = array("d", value).tobytes() if isinstance(value, list) else None
            except TypeError:  # not numbers (pgvector may still take them, or says what is wrong)
                doubles = None
            return convert(value) if doubles is None else text_of(doubles)

        return process


QUERY_VECTOR = QueryVector()
_TEXTS = ARRAY(Text)


def processed(alias: str) -> str:
    """SQL condition: the row's document (`alias`.`document_id`) is processed. A scalar subquery, not EXISTS:
    the planner keeps it a per-row filter on the HNSW index scan instead of turning it into a join."""
    return (
        f"(SELECT d.status FROM documents d WHERE d.project_id = {alias}.project_id"
        f" AND d.id = {alias}.document_id) = 'processed'"
    )


def _processed_join(alias: str) -> str:
    """The same condition as `processed`, as a join (the document's primary key makes it at most one row)."""
    return (
        f"JOIN documents {alias}_doc ON {alias}_doc.project_id = {alias}.project_id"
        f" AND {alias}_doc.id = {alias}.document_id AND {alias}_doc.status = 'processed'"
    )


_SNAPSHOT_ID = re.compile(r"[0-9A-Fa-f]+(?:-[0-9A-Fa-f]+)+")


_VECTOR_SETTINGS = "set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', :ef, true)"


async def open_query_reads(conn: AsyncConnection, beside: AsyncConnection | None, ef_search: int) -> None:
    """Opens the query's read transaction on `conn` (and on `beside`, its second connection) for the vector
    searches, all reads seeing one committed state: a document update or deletion committing meanwhile is
    seen whole or not at all, never a chunk of each version. Must come before any statement on either
    connection; read-only, so it never has to retry. REPEATABLE READ rides on the BEGIN the driver sends and
    the settings on the snapshot export: two round trips on `conn`, three on `beside` (each one waits for
    the server, which costs a query more than the statements' own work on a busy machine)."""
    ef = {"ef": str(max(1, min(ef_search, 1000)))}
    await conn.execution_options(isolation_level="REPEATABLE READ")
    if beside is None:
        await conn.execute(text(f"SELECT {_VECTOR_SETTINGS}"), ef)
        return
    snapshot = str(await conn.scalar(text(f"SELECT pg_export_snapshot(), {_VECTOR_SETTINGS}"), ef))
    if not _SNAPSHOT_ID.fullmatch(snapshot):
        raise RuntimeError(f"unexpected snapshot id {snapshot[:40]!r}")
    await beside.execution_options(isolation_level="REPEATABLE READ")
    await beside.execute(text(f"SET TRANSACTION SNAPSHOT '{snapshot}'"))  # SET takes no bound parameter
    await beside.execute(text(f"SELECT {_VECTOR_SETTINGS}"), ef)


async def prepare_vector_search(conn: AsyncConnection, ef_search: int) -> None:
    """Must run inside the transaction of the searches (the settings are transaction-local)."""
    await conn.execute(text(f"SELECT {_VECTOR_SETTINGS}"), {"ef": str(max(1, min(ef_search, 1000)))})


_ENTITY_SEARCH = text("""
WITH nearest AS MATERIALIZED (
    SELECT key, name, entity_type, description, degree, file_paths, embedding <=> :vec AS distance
    FROM entities
    WHERE project_id = :project_id AND embedding IS NOT NULL
    ORDER BY embedding <=> :vec
    LIMIT :limit
)
SELECT * FROM nearest WHERE distance < :max_distance ORDER BY distance, key
""").bindparams(bindparam("vec", type_=QUERY_VECTOR))

# The two ends of a relation row, joined as `s` (source) and `t` (target); read back by `endpoint_hit`.
ENDPOINT_COLUMNS = """s.entity_type AS src_type, s.description AS src_description, s.degree AS src_degree,
       s.file_paths AS src_file_paths,
       t.entity_type AS tgt_type, t.description AS tgt_description, t.degree AS tgt_degree,
       t.file_paths AS tgt_file_paths"""

_RELATION_SEARCH = text(f"""
WITH nearest AS MATERIALIZED (
    SELECT src_key, tgt_key, keywords, description, weight, file_paths, embedding <=> :vec AS distance
    FROM relations
    WHERE project_id = :project_id AND embedding IS NOT NULL
    ORDER BY embedding <=> :vec
    LIMIT :limit
)
SELECT n.*, s.name AS src_name, t.name AS tgt_name, s.degree + t.degree AS edge_degree,
       {ENDPOINT_COLUMNS}
FROM nearest n
JOIN entities s ON s.project_id = :project_id AND s.key = n.src_key
JOIN entities t ON t.project_id = :project_id AND t.key = n.tgt_key
WHERE n.distance < :max_distance
ORDER BY n.distance, n.src_key, n.tgt_key
""").bindparams(bindparam("vec", type_=QUERY_VECTOR))

_CHUNK_SEARCH = text(f"""
WITH nearest AS MATERIALIZED (
    SELECT c.id, c.document_id, c.content, c.file_path, c.embedding <=> :vec AS distance
    FROM chunks c
    WHERE c.project_id = :project_id AND c.embedding IS NOT NULL AND {processed("c")}
    ORDER BY c.embedding <=> :vec
    LIMIT :limit
)
SELECT * FROM nearest WHERE distance < :max_distance ORDER BY distance, id
""").bindparams(bindparam("vec", type_=QUERY_VECTOR))


async def mapped_rows(conn: AsyncConnection, statement: Any, params: dict) -> list[dict]:
    return [dict(r) for r in (await conn.execute(statement, params)).mappings()]


def entity_hit(row: dict) -> EntityHit:
    return EntityHit(
        row["key"], row["name"], row["entity_type"], row["description"], row["degree"], list(row["file_paths"] or [])
    )


def endpoint_hit(row: dict, side: str) -> EntityHit:
    """The `side` ("src" or "tgt") end of a relation search row."""
    return EntityHit(
        row[f"{side}_key"],
        row[f"{side}_name"],
        row[f"{side}_type"],
        row[f"{side}_description"],
        row[f"{side}_degree"],
        list(row[f"{side}_file_paths"] or []),
    )


def relation_hit(row: dict) -> RelationHit:
    return RelationHit(
        row["src_key"],
        row["tgt_key"],
        row["src_name"],
        row["tgt_name"],
        row["keywords"],
        row["description"],
        float(row["weight"]),
        list(row["file_paths"] or []),
    )


async def search_entities(
    conn: AsyncConnection, project_id: str, vec: list[float], limit: int, min_similarity: float
) -> list[EntityHit]:
    rows = await mapped_rows(
        conn,
        _ENTITY_SEARCH,
        {"project_id": project_id, "vec": vec, "limit": limit, "max_distance": 1.0 - min_similarity},
    )
    return [entity_hit(r) for r in rows]


async def search_relations(
    conn: AsyncConnection, project_id: str, vec: list[float], limit: int, min_similarity: float
) -> list[tuple[RelationHit, EntityHit, EntityHit]]:
    """The nearest relations, each with its source and target entities."""
    rows = await mapped_rows(
        conn,
        _RELATION_SEARCH,
        {"project_id": project_id, "vec": vec, "limit": limit, "max_distance": 1.0 - min_similarity},
    )
    return [(relation_hit(r), endpoint_hit(r, "src"), endpoint_hit(r, "tgt")) for r in rows]


async def search_chunks(
    conn: AsyncConnection, project_id: str, vec: list[float], limit: int, min_similarity: float
) -> list[ChunkHit]:
    rows = await mapped_rows(
        conn,
        _CHUNK_SEARCH,
        {"project_id": project_id, "vec": vec, "limit": limit, "max_distance": 1.0 - min_similarity},
    )
    return [ChunkHit(r["id"], r["document_id"], r["content"], r["file_path"], "vector") for r in rows]


# Edges of the named (anchored) entities first, in the entities' order; then every other edge by its
# closeness to the query vector; then (edge degree, weight) as LightRAG ranks them.
# A hub among the keys touches thousands of edges (25x corpus: ~7,000 for one question), so the work per
# touching edge is kept small: its distance is taken as it is read (the vector is not carried into the
# grouping, which spilled to disk), and the endpoint degrees, a tie-break after (tier, distance), are looked
# up only for the edges ranked within `limit` by (tier, distance), ties at the cut included: any other edge
# has `limit` edges strictly before it, so it cannot be among the first `limit` whatever its degree.
_RELATIONS_OF_ENTITIES = text("""
WITH picked AS (
    SELECT k.key, k.pos FROM unnest(CAST(:keys AS text[])) WITH ORDINALITY AS k(key, pos)
),
touching AS (
    SELECT r.src_key, r.tgt_key, r.weight, r.embedding <=> :vec AS distance, p.pos FROM picked p
    JOIN relations r ON r.project_id = :project_id AND r.src_key = p.key
    UNION ALL
    SELECT r.src_key, r.tgt_key, r.weight, r.embedding <=> :vec AS distance, p.pos FROM picked p
    JOIN relations r ON r.project_id = :project_id AND r.tgt_key = p.key
),
edges AS (
    SELECT src_key, tgt_key, weight, min(pos) AS first_pos, coalesce(min(distance), 2.0) AS distance,
           least(min(pos), :anchored + 1) AS tier
    FROM touching GROUP BY src_key, tgt_key, weight
),
placed AS (
    SELECT e.*, rank() OVER (ORDER BY e.tier, e.distance) AS place FROM edges e
),
top AS (
    SELECT e.src_key, e.tgt_key, e.weight, e.first_pos, e.distance, s.name AS src_name, t.name AS tgt_name,
           s.degree + t.degree AS edge_degree, e.tier
    FROM placed e
    JOIN entities s ON s.project_id = :project_id AND s.key = e.src_key
    JOIN entities t ON t.project_id = :project_id AND t.key = e.tgt_key
    WHERE e.place <= :limit
    ORDER BY e.tier, e.distance, edge_degree DESC, e.weight DESC, e.first_pos, e.src_key, e.tgt_key
    LIMIT :limit
)
SELECT t.src_key, t.tgt_key, t.src_name, t.tgt_name, t.edge_degree, t.first_pos,
       r.keywords, r.description, r.weight, r.file_paths
FROM top t
JOIN relations r ON r.project_id = :project_id AND r.src_key = t.src_key AND r.tgt_key = t.tgt_key
ORDER BY t.tier, t.distance, t.edge_degree DESC, r.weight DESC, t.first_pos, t.src_key, t.tgt_key
""").bindparams(bindparam("vec", type_=QUERY_VECTOR))


async def relations_of_entities(
    conn: AsyncConnection,
    project_id: str,
    keys: list[str],
    limit: int,
    vec: list[float] | None = None,
    anchored: int = 0,
) -> list[RelationHit]:
    """Edges touching any of `keys`: those of the first `anchored` keys first (in key order), the rest by
    closeness to `vec`; ties by (deg(a) + deg(b), weight). Ranked and limited in SQL, so hub entities never
    pull thousands of rows."""
    if not keys:
        return []
    rows = await mapped_rows(
        conn,
        _RELATIONS_OF_ENTITIES,
        {"project_id": project_id, "keys": keys, "limit": limit, "vec": vec, "anchored": anchored},
    )
    return [relation_hit(r) for r in rows]


# Provenance in insertion order; when the stored (capped, KEEP/FIFO) source_ids list is non-empty only
# the chunks it keeps are used, as the official implementation reads its capped source_id field.
# Entities and relations in one statement (kind 'e' / 'r'), to save a round trip per query.
# An entity's kept chunk ids are the array of one index condition (`chunk_id = ANY(source_ids)` on the
# provenance key): one scan per entity walks its keys in order, where a lookup per kept id (a hub keeps 200)
# descended the index each time, most of the walk's read at 25x. As a filter on each of a hub's provenance
# rows instead, the same test read its TOASTed array once per row (thousands of rows per hub).
# The processed check is a join, not `processed()`'s per-row subquery (the planner ran that as a sequential
# scan of every document for each of the thousands of rows), and an entity's rows are checked once per
# distinct document: a query's ~2,000 entity provenance rows come from a few hundred documents.
# One row per key, its chunk ids aggregated in order: building a result row per chunk id cost the
# application more than the statement cost the server. Each kind is grouped on its own: one sort of every
# row by (kind, keys, seq) cost the server about 0.8 ms more per walk than the groups' own sorts.
_SOURCES = text(f"""
WITH picked AS MATERIALIZED (
    SELECT e.key, e.source_ids FROM entities e
    WHERE e.project_id = :project_id AND e.key = ANY(CAST(:keys AS text[]))
),
entity_rows AS MATERIALIZED (
    SELECT es.entity_key, es.chunk_id, es.seq, es.document_id
    FROM picked p
    JOIN entity_sources es ON es.project_id = :project_id AND es.entity_key = p.key
    WHERE cardinality(p.source_ids) = 0
    UNION ALL
    SELECT es.entity_key, es.chunk_id, es.seq, es.document_id
    FROM picked p
    JOIN entity_sources es
      ON es.project_id = :project_id AND es.entity_key = p.key AND es.chunk_id = ANY(p.source_ids)
    WHERE cardinality(p.source_ids) > 0
),
entity_documents AS MATERIALIZED (
    SELECT d.id FROM documents d
    WHERE d.project_id = :project_id AND d.status = 'processed'
      AND d.id IN (SELECT DISTINCT document_id FROM entity_rows)
)
SELECT 'e' AS kind, er.entity_key AS src_key, '' AS tgt_key, array_agg(er.chunk_id ORDER BY er.seq, er.chunk_id)
FROM entity_rows er JOIN entity_documents d ON d.id = er.document_id
GROUP BY er.entity_key
UNION ALL
SELECT 'r', rs.src_key, rs.tgt_key, array_agg(rs.chunk_id ORDER BY rs.seq, rs.chunk_id)
FROM unnest(CAST(:srcs AS text[]), CAST(:tgts AS text[])) AS p(src_key, tgt_key)
JOIN relation_sources rs ON rs.project_id = :project_id AND rs.src_key = p.src_key AND rs.tgt_key = p.tgt_key
JOIN relations r ON r.project_id = rs.project_id AND r.src_key = rs.src_key AND r.tgt_key = rs.tgt_key
{_processed_join("rs")}
WHERE cardinality(r.source_ids) = 0 OR rs.chunk_id = ANY(r.source_ids)
GROUP BY rs.src_key, rs.tgt_key
""")


async def source_chunk_ids(
    conn: AsyncConnection, project_id: str, keys: list[str], pairs: list[tuple[str, str]]
) -> tuple[dict[str, list[str]], dict[tuple[str, str], list[str]]]:
    """Chunk ids (insertion order) of each entity key and each relation pair."""
    by_entity: dict[str, list[str]] = {key: [] for key in keys}
    by_pair: dict[tuple[str, str], list[str]] = {pair: [] for pair in pairs}
    if keys or pairs:
        params = {"project_id": project_id, "keys": keys, "srcs": [p[0] for p in pairs], "tgts": [p[1] for p in pairs]}
        for kind, src_key, tgt_key, chunk_ids in await conn.execute(_SOURCES, params):
            if kind == "e":
                by_entity[src_key] = chunk_ids
            else:
                by_pair[(src_key, tgt_key)] = chunk_ids
    return by_entity, by_pair


_CHUNKS_BY_IDS = text(f"""
SELECT c.id, c.document_id, c.content, c.file_path, c.order_index
FROM chunks c
WHERE c.project_id = :project_id AND c.id = ANY(CAST(:ids AS text[])) AND {processed("c")}
""")

_CHUNK_SIMILARITY = text(f"""
SELECT c.id, c.embedding <=> :vec AS distance
FROM chunks c
WHERE c.project_id = :project_id AND c.id = ANY(CAST(:ids AS text[])) AND c.embedding IS NOT NULL
  AND {processed("c")}
""").bindparams(bindparam("vec", type_=QUERY_VECTOR))


async def chunks_by_ids(conn: AsyncConnection, project_id: str, sources: dict[str, str]) -> dict[str, ChunkHit]:
    """The chunks named by `sources` (chunk id → how it was found: "entity", "relation")."""
    if not sources:
        return {}
    rows = await mapped_rows(conn, _CHUNKS_BY_IDS, {"project_id": project_id, "ids": list(sources)})
    return {r["id"]: ChunkHit(r["id"], r["document_id"], r["content"], r["file_path"], sources[r["id"]]) for r in rows}


async def chunk_distances(conn: AsyncConnection, project_id: str, ids: list[str], vec: list[float]) -> dict[str, float]:
    """Cosine distance of the query vector to each stored chunk embedding (chunks without one are absent).
    Computed in the database, so candidate vectors never travel to the application."""
    if not ids:
        return {}
    result = await conn.execute(_CHUNK_SIMILARITY, {"project_id": project_id, "ids": ids, "vec": vec})
    return {row.id: float(row.distance) for row in result}


_PROJECT = text("""
SELECT p.settings,
       EXISTS (SELECT 1 FROM chunks WHERE project_id = :project_id)
       OR EXISTS (SELECT 1 FROM entities WHERE project_id = :project_id) AS has_content
FROM projects p WHERE p.id = :project_id
""")


async def project_for_query(conn: AsyncConnection, project_id: str) -> dict | None:
    """The project's settings overrides and whether it holds anything to retrieve; None if unknown."""
    row = (await conn.execute(_PROJECT, {"project_id": project_id})).mappings().first()
    return dict(row) if row else None
