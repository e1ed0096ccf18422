"""docs/SCALING.md's Citus table list names every table the migrations create, each as distributed, reference or
local, and says which of them has a primary key without `project_id` (checked against the migrated schema)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.database import TEMPLATE_DB

DOC = Path(__file__).resolve().parents[2] / "docs" / "SCALING.md"

_TABLES = "SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p')"
_KEYS_WITHOUT_PROJECT = """
SELECT conrelid::regclass::text FROM pg_constraint
WHERE connamespace = 'public'::regnamespace AND contype IN ('p', 'u')
  AND NOT EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = conrelid AND a.attnum = ANY (conkey)
                  AND a.attname = 'project_id')
"""


def _listed() -> dict[str, str]:
    """table → kind, from the rows of the table under '### Every table'."""
    section = DOC.read_text(encoding="utf-8").split("### Every table", 1)[1].split("\n### ", 1)[0]
    return dict(re.findall(r"^\| `([a-z_]+)` \| ([a-z]+)", section, flags=re.MULTILINE))


async def test_every_migrated_table_is_placed_in_the_citus_list(pg_cluster):
    conn = await pg_cluster.admin(TEMPLATE_DB)
    try:
        tables = {row[0] for row in await conn.fetch(_TABLES)}
        without_project = {row[0] for row in await conn.fetch(_KEYS_WITHOUT_PROJECT)}
    finally:
        await conn.close()
    listed = _listed()
    assert tables - set(listed) == set()
    assert set(listed.values()) <= {"distributed", "reference", "local"}
    # a distributed table's keys must include its distribution column: the doc names each one that does not
    changes = DOC.read_text(encoding="utf-8").split("### What would have to change", 1)[1]
    for table in without_project:
        if listed[table] == "distributed":
            assert f"`{table} (id)`" in changes, table
