"""SQL of the fleet-wide summary marks: transaction-scoped advisory locks, only ever tried (never waited for).

Two-int keys (a class of their own, then the item's hash): apart from the entity key locks, which are
one-bigint keys (graph.py::lock_keys), so a mark never blocks a merge and a merge never blocks a mark.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

_MARK_CLASS = 3737

_TRY_MARKS = text("""
SELECT i FROM unnest(CAST(:idents AS text[])) AS i
 WHERE pg_try_advisory_xact_lock(:mark_class, hashtext(:project_id || chr(31) || i))
""")


async def try_marks(conn: AsyncConnection, project_id: str, idents: Sequence[str]) -> set[str]:
    """Inside a transaction: mark the items no other transaction has marked (until this one ends); those marked."""
    if not idents:
        return set()
    rows = await conn.execute(
        _TRY_MARKS, {"idents": sorted(set(idents)), "mark_class": _MARK_CLASS, "project_id": project_id}
    )
    return {r[0] for r in rows}
