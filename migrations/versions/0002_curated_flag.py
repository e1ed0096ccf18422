"""Mark entities and relations whose text was written or edited by hand (curation API, merges, renames).

A deletion rebuild recomputes descriptions from cached extractions; for curated items it keeps the
text and only shrinks their provenance (a rebuild from cached extractions would silently discard a manual edit).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for table in ("entities", "relations"):
        op.add_column(table, sa.Column("curated", sa.Boolean, nullable=False, server_default=sa.text("false")))


def downgrade() -> None:
    for table in ("entities", "relations"):
        op.drop_column(table, "curated")
