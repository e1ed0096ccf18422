"""Embeddings stay in the row; long text columns go to TOAST first.

pgvector gives `vector` EXTERNAL storage: when a row outgrows ~2 kB, PostgreSQL moves the vector out of line
before anything else. The full-text columns of migration 0005 pushed entity and relation rows over that
limit (a 384-d vector is 1.5 kB, an entity's tsvector ~0.6 kB), so every vector read — edge ranking by
closeness to the query, chunk distances, distances of search hits — became a TOAST lookup and, on a cold
cache, extra page reads (query p95 +25% at 10k entities). With MAIN storage the toaster compresses or moves
the text columns (descriptions, tsvectors, chunk text) first and the vector only if the row still does
not fit. Rows written from now on are laid out this way; existing rows move when next rewritten.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-23
"""

from __future__ import annotations

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

_TABLES = ("entities", "relations", "chunks")


def upgrade() -> None:
    for table in _TABLES:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN embedding SET STORAGE MAIN")


def downgrade() -> None:
    for table in _TABLES:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN embedding SET STORAGE EXTERNAL")
