"""A database first started before the embedding model was chosen (at the default size) follows EMBEDDING_DIM
while it stores no vector; once it stores one, another size is refused with the one-line start-up message."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from app.core.startup import StartupRefused
from app.db.engine import Database
from app.db.migrate import resize_empty_vectors, stored_embedding_dim
from app.wiring import build_container, close_container
from tests.support.database import TEST_DIM


async def _sizes(database_url: str) -> dict[str, str]:
    """table → type and storage of its embedding column, e.g. "vector(16) m"."""
    db = Database.from_settings(database_url, None, 2)
    try:
        async with db.connect() as conn:
            rows = await conn.execute(
                text(
                    "SELECT attrelid::regclass::text, format_type(atttypid, atttypmod) || ' ' || attstorage::text "
                    "FROM pg_attribute "
                    "WHERE attname = 'embedding' AND attrelid IN "
                    "('chunks'::regclass, 'entities'::regclass, 'relations'::regclass)"
                )
            )
            return dict(rows.all())
    finally:
        await db.close()


async def test_an_empty_database_takes_the_configured_size(make_settings):
    settings = make_settings(embedding_dim=TEST_DIM + 8)
    container = await build_container(settings)
    try:
        assert await stored_embedding_dim(container.db) == TEST_DIM + 8
        # the size follows the setting; the storage migration 0011 chose (MAIN) stays
        assert set((await _sizes(settings.database_url)).values()) == {f"vector({TEST_DIM + 8}) m"}
    finally:
        assert await resize_empty_vectors(container.db, TEST_DIM)  # the pooled database keeps the test size
        await close_container(container)


async def test_a_database_holding_vectors_refuses_another_size(make_settings):
    settings = make_settings()
    container = await build_container(settings)
    try:
        async with container.db.transaction() as conn:
            await conn.execute(
                text("INSERT INTO entities (project_id, key, name, embedding) VALUES ('default', 'k', 'K', :v)"),
                {"v": "[" + ",".join(["0.5"] * TEST_DIM) + "]"},
            )
    finally:
        await close_container(container)
    with pytest.raises(StartupRefused, match=f"EMBEDDING_DIM is {TEST_DIM + 8} but .* holds {TEST_DIM}-dimensional"):
        await build_container(make_settings(embedding_dim=TEST_DIM + 8))
    assert set((await _sizes(settings.database_url)).values()) == {f"vector({TEST_DIM}) m"}
