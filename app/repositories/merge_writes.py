"""SQL of an ingestion merge's writes: one statement per table, however many rows the document brings.

A merge writes while it holds the entity key locks of hub entities that every document touches, so these
statements are what other documents queue behind. Row by row (an executemany), each relation insert fired the
statement-level degree trigger on its own and rewrote both endpoint rows once more: a hub entity was
rewritten once per relation of the document, each time with every index of the row (the HNSW vector index
among them). Here the rows travel as one JSON record set or a few arrays, the degrees are added by the
entity upsert itself (the trigger is told to leave them to the caller, migration 0010), and each entity row is
written once per merge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.asyncio import AsyncConnection

from app.repositories.resolution_ledger import RECORDED_SQL, Recorded

Pair = tuple[str, str]

_UPSERTED_ENTITIES = text("""
INSERT INTO entities AS e (project_id, key, name, entity_type, description, source_ids, file_paths, truncate,
                           degree)
SELECT :project_id, r.key, r.name, r.entity_type, r.description, r.source_ids, r.file_paths, r.truncate, r.added
  FROM jsonb_to_recordset(:rows) AS r(key text, name text, entity_type text, description text, source_ids text[],
                                      file_paths text[], truncate text, added int)
 ORDER BY r.key COLLATE "C"
    ON CONFLICT (project_id, key) DO UPDATE
   SET entity_type = EXCLUDED.entity_type, description = EXCLUDED.description, source_ids = EXCLUDED.source_ids,
       file_paths = EXCLUDED.file_paths, truncate = EXCLUDED.truncate, degree = e.degree + EXCLUDED.degree,
       updated_at = now()
""").bindparams(bindparam("rows", type_=JSONB))

_ADDED_DEGREES = text("""
UPDATE entities e SET degree = e.degree + r.added
  FROM unnest(CAST(:keys AS text[]), CAST(:added AS int[])) AS r(key, added)
 WHERE e.project_id = :project_id AND e.key = r.key
""")

_UPSERTED_RELATIONS = text("""
INSERT INTO relations AS x (project_id, src_key, tgt_key, keywords, description, weight, source_ids, file_paths,
                            truncate)
SELECT :project_id, r.src_key, r.tgt_key, r.keywords, r.description, r.weight, r.source_ids, r.file_paths, r.truncate
  FROM jsonb_to_recordset(:rows) AS r(src_key text, tgt_key text, keywords text, description text, weight float8,
                                      source_ids text[], file_paths text[], truncate text)
 ORDER BY r.src_key COLLATE "C", r.tgt_key COLLATE "C"
    ON CONFLICT (project_id, src_key, tgt_key) DO UPDATE
   SET keywords = EXCLUDED.keywords, description = EXCLUDED.description, weight = EXCLUDED.weight,
       source_ids = EXCLUDED.source_ids, file_paths = EXCLUDED.file_paths, truncate = EXCLUDED.truncate,
       updated_at = now()
""").bindparams(bindparam("rows", type_=JSONB))


def degrees_added(new_pairs: Sequence[Pair]) -> dict[str, int]:
    """How many relation ends the new pairs add to each entity (as the degree trigger would count them)."""
    added: dict[str, int] = {}
    for pair in new_pairs:
        for key in pair:
            added[key] = added.get(key, 0) + 1
    return added


_DEGREES_BY_CALLER = "SELECT set_config('lightrag.degrees_by_caller', 'on', true)"
_RECORDED_AND_DEGREES_BY_CALLER = text(f"WITH {RECORDED_SQL} {_DEGREES_BY_CALLER}").bindparams(
    bindparam("rows", type_=JSONB), bindparam("ledger", type_=JSONB)
)


async def write_merge(
    conn: AsyncConnection,
    project_id: str,
    entity_rows: Sequence[dict[str, Any]],
    relation_rows: Sequence[dict[str, Any]],
    added: Mapping[str, int],
    recorded: Recorded | None = None,
) -> None:
    """Upsert the entity rows (each: key, name, entity_type, description, source_ids, file_paths, truncate;
    an existing entity keeps its display name), then the relation rows (src_key < tgt_key, both ends present
    once the entities are written). `added`: relation ends each entity gains (the caller's new pairs, locked
    with both ends), added to its degree in the same row write; entities not among the rows get theirs alone.
    The degree trigger is off for these statements and on again after them. `recorded`: resolution's aliases and
    ledger entries (resolution_ledger.add_with_aliases), written first, in the statement that turns it off."""
    if recorded is not None and (params := recorded.params()):
        await conn.execute(_RECORDED_AND_DEGREES_BY_CALLER, {"project_id": project_id, **params})
    else:
        await conn.execute(text(_DEGREES_BY_CALLER))
    if entity_rows:
        payload = [{**r, "added": added.get(r["key"], 0)} for r in entity_rows]
        await conn.execute(_UPSERTED_ENTITIES, {"project_id": project_id, "rows": payload})
    rest = sorted((k, n) for k, n in added.items() if n and k not in {r["key"] for r in entity_rows})
    if rest:
        await conn.execute(
            _ADDED_DEGREES, {"project_id": project_id, "keys": [k for k, _ in rest], "added": [n for _, n in rest]}
        )
    if relation_rows:
        await conn.execute(_UPSERTED_RELATIONS, {"project_id": project_id, "rows": list(relation_rows)})
    await conn.execute(text("SELECT set_config('lightrag.degrees_by_caller', 'off', true)"))
