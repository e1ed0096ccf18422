"""What extraction produced for each document: entities, relations, unparseable records, chunks that
yielded nothing, and a warning when the model returned no usable records.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("documents", sa.Column("extraction_report", JSONB))


def downgrade() -> None:
    op.drop_column("documents", "extraction_report")
