"""Person spelling keys recomputed: a person's phonetic key is now one key per way the name sounds (given name
and family name each coded, app/domain/name_sounds.py), so the phonetic index rows of existing projects' people
(entity_aliases rows under "\\x1e\\x1dspelt person ...") are under keys nothing computes any more, and a later
spelling of a stored person would not find it. Those rows are removed and every stored person is recorded again
under today's key, in the first free slot, in key order (as resolution records new entities). Places' keys did
not change. The rows are an index only: a downgrade has nothing to restore.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-27
"""

from __future__ import annotations

from alembic import op

from app.db.name_index import reindex_person_spellings

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    reindex_person_spellings(op.get_bind())


def downgrade() -> None:
    pass
