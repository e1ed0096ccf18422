"""The ambiguity check's ledger read (resolution_ledger.short_form_merges, after each document) goes through the
partial index of migration 0018: the project's other merges, however many, are not read; the rows it returns are
the standing merges of a short form that is, or ends with, one of the words."""

from __future__ import annotations

import asyncpg

from app.db.engine import Database, async_url
from app.repositories.resolution_ledger import _SHORT_FORMS, packed, short_form_merges

_ROW = (
    "INSERT INTO entity_merge_ledger (project_id, entity_key, merged_key, merged_name, rule)"
    " VALUES ('p', $1, $2, $2, $3)"
)


async def test_the_short_form_read_skips_the_projects_other_merges(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("INSERT INTO projects (id, name) VALUES ('p', 'p')")
        await conn.execute(
            "INSERT INTO entity_merge_ledger (project_id, entity_key, merged_key, merged_name, rule)"
            " SELECT 'p', 'entity ' || i, 'alias ' || i, 'Alias ' || i, 'rule' FROM generate_series(1, 20000) i"
        )
        await conn.executemany(
            _ROW,
            [
                ("ngozi okafor", "dr. okafor", "partial"),
                ("ngozi okafor", "okafor", "partial"),
                ("siemens healthineers", "siemens", "root"),
                ("chidi okafor", "okafor", "acronym"),  # another rule: not a short form's merge
            ],
        )
        await conn.execute("UPDATE entity_merge_ledger SET outcome = 'undone' WHERE merged_key = 'siemens'")
        await conn.execute("ANALYZE entity_merge_ledger")
        sql = _SHORT_FORMS.text.replace(":project_id", "$1").replace(":words", "$2").replace(":patterns", "$3")
        explained = await conn.fetch("EXPLAIN " + sql, "p", packed(["okafor"]), packed(["% okafor"]))
        plan = "\n".join(r[0] for r in explained)
    finally:
        await conn.close()
    assert "ix_entity_merge_ledger_short_forms" in plan, plan
    db = Database(async_url(database_url), pool_size=1)
    try:
        async with db.connect() as c:
            found = await short_form_merges(c, "p", ["okafor", "siemens"])
    finally:
        await db.close()
    assert [(m.merged_key, m.entity_key) for m in found] == [("dr. okafor", "ngozi okafor"), ("okafor", "ngozi okafor")]
