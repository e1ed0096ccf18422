"""Migrations: up from an empty database, and the schema agrees with the table definitions."""

from __future__ import annotations

from contextlib import asynccontextmanager

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import text

from app.db.engine import Database, async_url
from app.db.migrate import current_revision, head_revision, upgrade_to_head
from app.db.tables import metadata


def _upgrade_to(revision: str):
    """A run_sync callable upgrading the connection's database to `revision`."""
    return _migrated_to(revision, "upgrade")


def _downgrade_to(revision: str):
    """A run_sync callable downgrading the connection's database to `revision`."""
    return _migrated_to(revision, "downgrade")


def _migrated_to(revision: str, step: str):
    from alembic import command

    from app.db.migrate import alembic_config

    def run(sync):
        config = alembic_config(64)
        config.attributes["connection"] = sync
        getattr(command, step)(config, revision)

    return run


@asynccontextmanager
async def _scratch_database(pg_cluster, name: str):
    """A new empty database of the test cluster, dropped afterwards."""
    conn = await pg_cluster.admin()
    await conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
    await conn.execute(f'CREATE DATABASE "{name}"')
    await conn.close()
    db = Database(async_url(pg_cluster.url(name)))
    try:
        yield db
    finally:
        await db.close()
        conn = await pg_cluster.admin()
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await conn.close()


async def test_upgrade_from_empty_database(pg_cluster):
    async with _scratch_database(pg_cluster, "empty_mig") as db:
        async with db.connect() as c:
            assert await current_revision(c) is None  # no alembic_version table yet
        await upgrade_to_head(db, 64)
        await upgrade_to_head(db, 64)  # idempotent
        async with db.connect() as c:
            version = await c.scalar(text("SELECT version_num FROM alembic_version"))
            tables = set(
                (await c.execute(text("SELECT tablename FROM pg_tables WHERE schemaname = 'public'"))).scalars()
            )
            indexes = set(
                (await c.execute(text("SELECT indexname FROM pg_indexes WHERE indexdef LIKE '%hnsw%'"))).scalars()
            )
            default = await c.scalar(text("SELECT id FROM projects WHERE id = 'default'"))
            diff = await c.run_sync(lambda sync: compare_metadata(MigrationContext.configure(sync), metadata))
        assert version == head_revision()
        async with db.connect() as c:
            assert await current_revision(c) == version
        assert {
            "projects",
            "documents",
            "chunks",
            "entities",
            "relations",
            "entity_sources",
            "relation_sources",
            "llm_cache",
        } <= tables
        assert indexes == {"ix_chunks_embedding_hnsw", "ix_entities_embedding_hnsw", "ix_relations_embedding_hnsw"}
        assert default == "default"
        significant = [d for d in diff if d[0] not in ("add_index", "remove_index")]
        assert significant == []


async def test_degree_trigger_tracks_relations(app_client):
    async with app_client.container.db.transaction() as c:
        await c.execute(
            text(
                "INSERT INTO entities (project_id, key, name) VALUES "
                "('default','a','A'),('default','b','B'),('default','c','C')"
            )
        )
        await c.execute(
            text("INSERT INTO relations (project_id, src_key, tgt_key) VALUES ('default','a','b'),('default','a','c')")
        )
        await c.execute(text("DELETE FROM relations WHERE src_key='a' AND tgt_key='c'"))
        degrees = dict((await c.execute(text("SELECT key, degree FROM entities ORDER BY key"))).all())
    assert degrees == {"a": 1, "b": 1, "c": 0}


async def test_a_deletion_may_set_degrees_itself_for_its_own_transaction_only(app_client):
    from app.repositories import deletion

    db = app_client.container.db
    async with db.transaction() as c:
        await c.execute(
            text(
                "INSERT INTO entities (project_id, key, name) VALUES "
                "('default','a','A'),('default','b','B'),('default','c','C')"
            )
        )
        await c.execute(
            text(
                "INSERT INTO relations (project_id, src_key, tgt_key) VALUES "
                "('default','a','b'),('default','a','c'),('default','b','c')"
            )
        )
    async with db.transaction() as c:
        await deletion.set_degrees_here(c)
        await c.execute(text("DELETE FROM relations WHERE src_key='a'"))
        untouched = dict((await c.execute(text("SELECT key, degree FROM entities ORDER BY key"))).all())
        await deletion.recount_degrees(c, "default", ["a", "b", "c"])
        recounted = dict((await c.execute(text("SELECT key, degree FROM entities ORDER BY key"))).all())
    async with db.transaction() as c:  # the next transaction (maybe on the same pooled connection): trigger on
        await c.execute(text("DELETE FROM relations WHERE src_key='b'"))
        after = dict((await c.execute(text("SELECT key, degree FROM entities ORDER BY key"))).all())
    assert untouched == {"a": 2, "b": 2, "c": 2}
    assert recounted == {"a": 0, "b": 1, "c": 1}
    assert after == {"a": 0, "b": 0, "c": 0}


async def test_key_columns_use_byte_order_collation(app_client):
    """Relation pairs are sorted in Python (code point order) and checked by the database; every key
    column must compare the same way whatever the server's locale, so they are declared COLLATE "C"
    (this machine's PostgreSQL has no other locale to demonstrate a disagreement with)."""
    async with app_client.container.db.connect() as c:
        rows = (
            await c.execute(
                text(
                    "SELECT table_name || '.' || column_name, collation_name FROM information_schema.columns "
                    "WHERE column_name IN ('key', 'entity_key', 'src_key', 'tgt_key') AND table_schema = 'public' "
                    "AND table_name <> 'llm_cache'"
                )
            )
        ).all()
    assert dict(rows) == {
        name: "C"
        for name in (
            "entities.key",
            "relations.src_key",
            "relations.tgt_key",
            "entity_sources.entity_key",
            "relation_sources.src_key",
            "relation_sources.tgt_key",
            "entity_aliases.entity_key",
            "entity_merge_ledger.entity_key",
        )
    }


async def test_full_text_indexes_have_no_pending_list(app_client):
    """Searches must not read a pending list of recent entries (migration 0009)."""
    async with app_client.container.db.connect() as c:
        options = dict(
            (
                await c.execute(
                    text("SELECT relname, reloptions FROM pg_class WHERE relname LIKE 'ix_%_search_vector'")
                )
            ).all()
        )
    assert options == {f"ix_{t}_search_vector": ["fastupdate=off"] for t in ("entities", "relations", "chunks")}


async def test_vectors_are_kept_in_the_row_before_text_columns(app_client):
    """Migration 0011: the toaster moves descriptions, tsvectors and chunk text out of line before a vector."""
    async with app_client.container.db.connect() as c:
        storage = dict(
            (
                await c.execute(
                    text(
                        "SELECT attrelid::regclass::text, attstorage::text FROM pg_attribute "
                        "WHERE attname = 'embedding' "
                        "AND attrelid IN ('entities'::regclass, 'relations'::regclass, 'chunks'::regclass)"
                    )
                )
            ).all()
        )
    assert storage == {"entities": "m", "relations": "m", "chunks": "m"}


async def test_match_keys_are_recomputed_for_stored_names(pg_cluster):
    """0016: entities and aliases stored under the old match-key rules get index entries under today's keys;
    an entry already holding a key keeps its entity."""
    from app.domain.resolution import index_key

    rows = await _alias_rows_after_upgrade(
        pg_cluster,
        "keys_mig",
        "0015",
        (
            " ('default', 'zhou meilin', 'ZHOU Meilin', 'person'),"
            " ('default', 'tromsø', 'Tromsø', 'location'),"
            " ('default', 'pune peak', 'Pune Peak', 'location'),"
            " ('default', 'basin plan ii', 'Basin Plan II', 'concept'),"
            " ('default', 'second basin plan', 'Second Basin Plan', 'concept')"
        ),
        (
            " ('default', 'mt. pune', 'pune peak', 'Mt. Pune', 'manual'),"
            " ('default', :held, 'second basin plan', 'Second Basin Plan', 'rule')"
        ),
        {"held": index_key("2nd basin plan")},
    )
    assert rows[index_key("meilin zhou")] == "zhou meilin"
    assert rows[index_key("tromso")] == "tromsø"
    assert rows[index_key("mount pune")] == "pune peak"
    assert rows[index_key("2nd basin plan")] == "second basin plan"  # held already: kept
    assert rows["mt. pune"] == "pune peak"


async def test_person_spelling_keys_are_recomputed(pg_cluster):
    """0019: the phonetic index rows of stored people move from the old per-word codes to today's one key per
    name; the first in key order takes the first slot; places' rows and other aliases are left alone."""
    from app.domain.name_spellings import phonetic_slots
    from app.domain.resolution import MATCH_INDEX

    old_person, place = MATCH_INDEX + "\x1dspelt person TMTR XFXNK#0", MATCH_INDEX + "\x1dspelt place KRKF#0"
    rows = await _alias_rows_after_upgrade(
        pg_cluster,
        "spelt_mig",
        "0018",
        (
            " ('default', 'dmitriy shevchenko', 'Dmitriy Shevchenko', 'person'),"
            " ('default', 'dmitri chevtchenko', 'Dmitri Chevtchenko', 'PERSON'),"
            " ('default', 'kharkiv', 'Kharkiv', 'location')"
        ),
        (
            " ('default', :old_person, 'dmitriy shevchenko', 'Dmitriy Shevchenko', 'rule'),"
            " ('default', :place, 'kharkiv', 'Kharkiv', 'rule'),"
            " ('default', 'dr. shevchenko', 'dmitriy shevchenko', 'Dr. Shevchenko', 'manual')"
        ),
        {"old_person": old_person, "place": place},
    )
    slots = phonetic_slots("Dmitriy Shevchenko", "person")
    assert slots == phonetic_slots("Dmitri Chevtchenko", "person")  # one key for both spellings
    assert rows[MATCH_INDEX + slots[0]] == "dmitri chevtchenko"  # first in key order
    assert rows[MATCH_INDEX + slots[1]] == "dmitriy shevchenko"
    assert old_person not in rows
    assert rows[place] == "kharkiv"
    assert rows["dr. shevchenko"] == "dmitriy shevchenko"


async def test_comma_first_people_are_indexed_given_names_first(pg_cluster):
    """0020: a person stored as "Kariuki, A. K." gets the match-key and phonetic entries of "A. K. Kariuki", so a
    later document writing the usual order finds it; other people's phonetic rows are kept under today's keys."""
    from app.domain.name_matching import match_key
    from app.domain.name_spellings import phonetic_slots
    from app.domain.resolution import MATCH_INDEX, index_key

    rows = await _alias_rows_after_upgrade(
        pg_cluster,
        "comma_mig",
        "0019",
        (
            " ('default', 'kariuki, a. k.', 'Kariuki, A. K.', 'person'),"
            " ('default', 'dmitriy shevchenko', 'Dmitriy Shevchenko', 'person')"
        ),
    )
    usual = match_key("A. K. Kariuki", "person")
    assert match_key("Kariuki, A. K.", "person") == usual
    assert rows[index_key(usual)] == "kariuki, a. k."
    assert rows[MATCH_INDEX + phonetic_slots("Dmitriy Shevchenko", "person")[0]] == "dmitriy shevchenko"


async def test_two_word_places_get_their_dotted_initials_row(pg_cluster):
    """0021: a place stored as "West Virginia" gets the row of its dotted initials, where a later "W.Va." reads;
    a row already there keeps its slot."""
    from app.domain.name_designations import contraction_rows
    from app.domain.resolution import MATCH_INDEX

    taken = MATCH_INDEX + contraction_rows("West Victoria", "location")[0]
    rows = await _alias_rows_after_upgrade(
        pg_cluster,
        "cut_mig",
        "0020",
        (
            " ('default', 'west virginia', 'West Virginia', 'location'),"
            " ('default', 'west victoria', 'West Victoria', 'location'),"
            " ('default', 'vermont', 'Vermont', 'location')"
        ),
        ("('default', :row, 'west victoria', 'West Victoria', 'rule')"),
        {"row": taken},
    )
    first, second = (MATCH_INDEX + r for r in contraction_rows("West Virginia", "location")[:2])
    assert first == taken
    assert rows[first] == "west victoria"
    assert rows[second] == "west virginia"
    assert rows[MATCH_INDEX + contraction_rows("Vermont", "location")[0]] == "vermont"


async def _alias_rows_after_upgrade(
    pg_cluster, name: str, revision: str, entities: str, aliases: str = "", params: dict | None = None
) -> dict[str, str]:
    """A scratch database at `revision` with the entities (and aliases) given as the rows of an INSERT's
    VALUES, upgraded to head: its entity_aliases rows, alias key → entity key."""
    async with _scratch_database(pg_cluster, name) as db:
        async with db.transaction() as c:
            await c.run_sync(_upgrade_to(revision))
            await c.execute(text("INSERT INTO entities (project_id, key, name, entity_type) VALUES " + entities))
            if aliases:
                await c.execute(
                    text(
                        "INSERT INTO entity_aliases (project_id, alias_key, entity_key, alias_name, source) VALUES "
                        + aliases
                    ),
                    params or {},
                )
            await c.run_sync(_upgrade_to("head"))
        async with db.connect() as c:
            return dict((await c.execute(text("SELECT alias_key, entity_key FROM entity_aliases"))).all())
