"""Lexical search: full-text and trigram indexes over entity, relation and chunk text.

Each searchable table gets a stored generated `search_vector` (so ranking never re-parses long texts) with a
GIN index. Names use the 'simple' configuration (invented names must not be stemmed or dropped as stop
words); descriptions, relation keywords and chunk text use 'english'. Weights: A = name / relation keywords,
B = description. Where the server offers pg_trgm (the pgvector images do; some embedded builds do not), a
trigram index on `entities.key` serves substring name searches (`GET /entities?q=`); without it those
searches still work, by a scan.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_VECTORS = {
    "entities": "setweight(to_tsvector('simple'::regconfig, name), 'A') || "
    "setweight(to_tsvector('english'::regconfig, description), 'B')",
    "relations": "setweight(to_tsvector('english'::regconfig, keywords), 'A') || "
    "setweight(to_tsvector('english'::regconfig, description), 'B')",
    "chunks": "to_tsvector('english'::regconfig, content)",
}


def upgrade() -> None:
    for table, expression in _VECTORS.items():
        op.execute(f"ALTER TABLE {table} ADD COLUMN search_vector tsvector GENERATED ALWAYS AS ({expression}) STORED")
        op.execute(f"CREATE INDEX ix_{table}_search_vector ON {table} USING gin (search_vector)")
    bind = op.get_bind()
    available = bind.execute(sa.text("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'")).first()
    if available is None:
        return
    try:
        with bind.begin_nested():  # a role that may not create extensions keeps the scan, not a failed upgrade
            bind.execute(sa.text("CREATE EXTENSION IF NOT EXISTS pg_trgm"))
            bind.execute(sa.text("CREATE INDEX ix_entities_key_trgm ON entities USING gin (key gin_trgm_ops)"))
    except sa.exc.DBAPIError:
        pass


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_entities_key_trgm")  # pg_trgm itself stays: others may use it
    for table in _VECTORS:
        op.execute(f"DROP INDEX IF EXISTS ix_{table}_search_vector")
        op.drop_column(table, "search_vector")
