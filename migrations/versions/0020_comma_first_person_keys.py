"""People's keys recomputed once more: a person's name written family name first with a comma ("Kariuki, A. K.")
is now read given names first, so its match key and phonetic key changed, and a later "A. K. Kariuki" would not
find a stored one. Both indexes are rebuilt under today's rules (app/db/name_index.py): missing match-key entries
added, the people's phonetic rows recorded again. Index rows only: a downgrade has nothing to restore.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-27
"""

from __future__ import annotations

from alembic import op

from app.db.name_index import add_missing_match_keys, reindex_person_spellings

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    add_missing_match_keys(conn)
    reindex_person_spellings(conn)


def downgrade() -> None:
    pass
