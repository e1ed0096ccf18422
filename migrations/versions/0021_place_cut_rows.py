"""Places' cut-short rows added: a place of two words ("West Virginia") is now also recorded under its dotted
initials ("w.v."), where a name of its words cut short ("W.Va.") reads, so a later "W.Va." finds a stored "West
Virginia". Stored places get those rows under today's rules (app/db/name_index.py), the rows already there kept.
Index rows only: a downgrade has nothing to restore.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-27
"""

from __future__ import annotations

from alembic import op

from app.db.name_index import add_place_cut_rows

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    add_place_cut_rows(op.get_bind())


def downgrade() -> None:
    pass
