"""Documents owing their resolution review: the final pass after a document's merge (absorptions of earlier
nodes, and the undo of merges the document makes ambiguous or contradicts: app/services/ingest/absorb.py) runs
after its summaries and embeddings, so an attempt failing in between left it to a retry, and a document failed
for good never had it. The merge now marks the document as owing it (`review_owed`, in the same statement that
sets `graph_merged`), its final write clears the mark once processed, and any worker sweeps the documents no
attempt is processing that still owe it, each under a lease (`review_taken_at`):
app/services/ingest/review_sweep.py. Documents failed before this migration are not marked.

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("documents", sa.Column("review_owed", sa.Boolean, nullable=False, server_default=sa.false()))
    op.add_column("documents", sa.Column("review_taken_at", sa.DateTime(timezone=True)))
    op.create_index("ix_documents_review_owed", "documents", ["finished_at"], postgresql_where=sa.text("review_owed"))


def downgrade() -> None:
    op.drop_index("ix_documents_review_owed", table_name="documents")
    op.drop_column("documents", "review_taken_at")
    op.drop_column("documents", "review_owed")
