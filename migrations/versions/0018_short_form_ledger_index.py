"""The standing short-form merges of the ledger, indexed apart: after each document, resolution looks for the
merges of a surname or root written alone that the document's names make ambiguous
(app/repositories/resolution_ledger.py::short_form_merges). Without this index that read went over every
ledger row of the project (every automatic merge ever made) for each document ingested; with it, only over the
standing "partial" and "root" merges, a small share of them. A partial index: the other merges never enlarge it.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-27
"""

from __future__ import annotations

from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        "CREATE INDEX IF NOT EXISTS ix_entity_merge_ledger_short_forms"
        " ON entity_merge_ledger (project_id, merged_key)"
        " WHERE rule IN ('partial', 'root') AND outcome IS NULL"
    )


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_entity_merge_ledger_short_forms")
