"""Match keys recomputed: the match-key rules changed (possessives, letters with a stroke, St./Mt./Ft., ordinals,
years, family name first, common diminutives, Roman numerals), so the match-key index entries of existing projects
(entity_aliases rows whose key starts with U+001E) are added under today's keys for every entity and every
project-wide alias (app/domain/match_index.py). Rows already holding a key are kept; nothing is removed, so a
downgrade has nothing to undo. A later change of the rules adds another migration of this kind.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27
"""

from __future__ import annotations

from alembic import op

from app.db.name_index import add_missing_match_keys

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    add_missing_match_keys(op.get_bind())


def downgrade() -> None:
    pass
