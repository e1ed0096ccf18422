"""Migration 0024: `curated` becomes derived from `hand_fields`, the fields written by hand. Rows curated before
it keep every field through deletion rebuilds, as they did (what a person wrote there cannot be told apart);
the others have none. A downgrade gives the flag back."""

from __future__ import annotations

from sqlalchemy import text

from tests.infra.test_migrations import _downgrade_to, _scratch_database, _upgrade_to

ENTITIES = "INSERT INTO entities (project_id, key, name, curated) VALUES ('p', 'a', 'A', true), ('p', 'b', 'B', false)"
RELATIONS = "INSERT INTO relations (project_id, src_key, tgt_key, curated) VALUES ('p', 'a', 'b', true)"


async def test_0024_keeps_every_field_of_rows_curated_before_and_derives_the_flag(pg_cluster):
    async with _scratch_database(pg_cluster, "hand_fields_mig") as db:
        async with db.transaction() as c:
            await c.run_sync(_upgrade_to("0023"))
            await c.execute(text("INSERT INTO projects (id, name) VALUES ('p', 'p')"))
            await c.execute(text(ENTITIES))
            await c.execute(text(RELATIONS))
            await c.run_sync(_upgrade_to("head"))
        async with db.connect() as c:
            entities = (await c.execute(text("SELECT key, hand_fields, curated FROM entities ORDER BY key"))).all()
            relations = (await c.execute(text("SELECT hand_fields, curated FROM relations"))).all()
        assert [tuple(r) for r in entities] == [("a", ["description", "entity_type"], True), ("b", [], False)]
        assert [tuple(r) for r in relations] == [(["description", "keywords", "weight"], True)]
        async with db.transaction() as c:  # the flag follows the fields
            await c.execute(text("UPDATE entities SET hand_fields = '{entity_type}' WHERE key = 'b'"))
            assert (await c.execute(text("SELECT curated FROM entities WHERE key = 'b'"))).scalar() is True
            await c.run_sync(_downgrade_to("0023"))
        async with db.connect() as c:
            flags = (await c.execute(text("SELECT key, curated FROM entities ORDER BY key"))).all()
        assert [tuple(r) for r in flags] == [("a", True), ("b", True)]
