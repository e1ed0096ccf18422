"""Full-text indexes without a pending list: every search costs the same, however recent the writes.

A GIN index with `fastupdate` (PostgreSQL's default) appends new entries to a pending list that every search
reads in full until VACUUM or the list's size limit (4 MB) folds it into the index. Ingestion rewrites entity
and relation rows all the time (each merge updates a description), so a busy project's searches kept
scanning thousands of pending entries: right after 10,000 entities were written, a search for a word matching
nothing read ~400 pages (7 with the list folded in). With `fastupdate = off` entries go straight into the
index: writes cost a little more, searches read only the posting lists of their words. The existing pending
lists are folded in now.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23
"""

from __future__ import annotations

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

_INDEXES = ("ix_entities_search_vector", "ix_relations_search_vector", "ix_chunks_search_vector")


def upgrade() -> None:
    for index in _INDEXES:
        op.execute(f"ALTER INDEX {index} SET (fastupdate = off)")
        op.execute(f"SELECT gin_clean_pending_list('{index}'::regclass)")


def downgrade() -> None:
    for index in _INDEXES:
        op.execute(f"ALTER INDEX {index} RESET (fastupdate)")
