"""Worker liveness: every worker records when it was last seen and how often it heartbeats, so the
documents of a worker that stopped heartbeating are retaken after ~3 of its heartbeat intervals instead of
after WORKER_CLAIM_TIMEOUT.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "workers",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("heartbeat_interval", sa.Float, nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.PrimaryKeyConstraint("id", name="pk_workers"),
        sa.CheckConstraint("heartbeat_interval > 0", name="ck_workers_positive_interval"),
    )


def downgrade() -> None:
    op.drop_table("workers")
