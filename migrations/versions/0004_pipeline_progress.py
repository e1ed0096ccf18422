"""Visible, controllable ingestion: each document's stage and running figures (`progress`), a cancel
request flag and the `cancelled` status, and a bounded per-project log of pipeline events.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("documents", sa.Column("stage", sa.Text))
    op.add_column("documents", sa.Column("progress", JSONB))
    op.add_column(
        "documents", sa.Column("cancel_requested", sa.Boolean, nullable=False, server_default=sa.text("false"))
    )
    op.drop_constraint("ck_documents_status", "documents", type_="check")
    op.create_check_constraint(
        op.f("ck_documents_status"),
        "documents",
        "status IN ('pending', 'processing', 'processed', 'failed', 'cancelled')",
    )
    op.create_table(
        "pipeline_events",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("project_id", sa.Text, nullable=False),
        sa.Column("document_id", sa.Text, nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("detail", sa.Text),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"], ondelete="CASCADE", name="fk_pipeline_events_project_id_projects"
        ),
        sa.CheckConstraint(
            "kind IN ('started', 'finished', 'failed', 'retried', 'cancelled')", name="ck_pipeline_events_kind"
        ),
    )
    op.create_index("ix_pipeline_events_project_id_id", "pipeline_events", ["project_id", "id"])


def downgrade() -> None:
    op.drop_table("pipeline_events")
    op.execute("UPDATE documents SET status = 'failed', error = 'cancelled' WHERE status = 'cancelled'")
    op.drop_constraint("ck_documents_status", "documents", type_="check")
    op.create_check_constraint(
        op.f("ck_documents_status"), "documents", "status IN ('pending', 'processing', 'processed', 'failed')"
    )
    for column in ("cancel_requested", "progress", "stage"):
        op.drop_column("documents", column)
