"""SQL for resolution across documents (migration 0013): the entities near a document's names, read by key
ranges, and the ledger of automatic merges."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import bindparam, select, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables import entity_merge_ledger
from app.domain.cross_document import Nearby, Ranges

_PER_RANGE = 20  # more entities than this under one root or surname: ambiguous whatever they are


def _upper(prefix: str) -> str:
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


# Each range is a scan of an index (the primary key, or the reversed key of migration 0013), cut at a few rows.
_NEARBY = text(f"""
SELECT e.key, e.name, e.entity_type FROM entities e
 WHERE e.project_id = :project_id AND e.key = ANY(CAST(:exact AS text[]))
UNION
SELECT x.key, x.name, x.entity_type
  FROM unnest(CAST(:lo AS text[]), CAST(:hi AS text[])) AS r(lo, hi),
       LATERAL (SELECT e.key, e.name, e.entity_type FROM entities e
                 WHERE e.project_id = :project_id AND e.key >= r.lo AND e.key < r.hi
                 LIMIT {_PER_RANGE}) x
UNION
SELECT x.key, x.name, x.entity_type
  FROM unnest(CAST(:rlo AS text[]), CAST(:rhi AS text[])) AS r(lo, hi),
       LATERAL (SELECT e.key, e.name, e.entity_type FROM entities e
                 WHERE e.project_id = :project_id AND reverse(e.key) >= r.lo AND reverse(e.key) < r.hi
                 LIMIT {_PER_RANGE}) x
""")


async def entities_near(conn: AsyncConnection, project_id: str, ranges: Ranges) -> Nearby:
    """key → (name, type) of the entities in `ranges` (one statement; nothing is read for empty ranges)."""
    if not (ranges.prefixes or ranges.reversed_prefixes or ranges.exact):
        return {}
    prefixes, reversed_prefixes = sorted(ranges.prefixes), sorted(ranges.reversed_prefixes)
    rows = await conn.execute(
        _NEARBY,
        {
            "project_id": project_id,
            "exact": sorted(ranges.exact),
            "lo": prefixes,
            "hi": [_upper(p) for p in prefixes],
            "rlo": reversed_prefixes,
            "rhi": [_upper(p) for p in reversed_prefixes],
        },
    )
    return {k: (n, t) for k, n, t in rows.all()}


@dataclass(frozen=True)
class LedgerItem:
    entity_key: str
    merged_key: str
    merged_name: str
    rule: str
    evidence: str
    document_id: str | None
    retroactive: bool = False


_ADD = text("""
INSERT INTO entity_merge_ledger (project_id, entity_key, merged_key, merged_name, rule, evidence, document_id,
                                 retroactive)
SELECT :project_id, r.entity_key, r.merged_key, r.merged_name, r.rule, r.evidence, r.document_id, r.retroactive
  FROM jsonb_to_recordset(:rows) AS r(entity_key text, merged_key text, merged_name text, rule text,
                                      evidence text, document_id text, retroactive boolean)
""").bindparams(bindparam("rows", type_=JSONB))


async def add(conn: AsyncConnection, project_id: str, items: Sequence[LedgerItem]) -> None:
    if items:
        await conn.execute(_ADD, {"project_id": project_id, "rows": [i.__dict__ for i in items]})


async def entries(conn: AsyncConnection, project_id: str, entity_key: str | None = None) -> list[LedgerItem]:
    """The ledger, oldest first (of one entity when `entity_key` is given)."""
    t = entity_merge_ledger.c
    query = select(t.entity_key, t.merged_key, t.merged_name, t.rule, t.evidence, t.document_id, t.retroactive).where(
        t.project_id == project_id
    )
    if entity_key is not None:
        query = query.where(t.entity_key == entity_key)
    rows = await conn.execute(query.order_by(t.id))
    return [LedgerItem(*row) for row in rows.all()]
