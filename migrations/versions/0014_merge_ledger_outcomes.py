"""What became of each automatic merge: confirmed by a user, undone, or rejected (undone and kept apart).

`outcome` is NULL while the merge stands unreviewed; `decided_at` is when the outcome was set. A project's
ledger is listed newest first, hence the (project_id, id) index.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("entity_merge_ledger", sa.Column("outcome", sa.Text))
    op.add_column("entity_merge_ledger", sa.Column("decided_at", sa.DateTime(timezone=True)))
    op.create_check_constraint(
        "ck_entity_merge_ledger_outcome", "entity_merge_ledger", "outcome IN ('confirmed', 'undone', 'rejected')"
    )
    op.create_index("ix_entity_merge_ledger_project_id_id", "entity_merge_ledger", ["project_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_entity_merge_ledger_project_id_id", table_name="entity_merge_ledger")
    op.drop_constraint("ck_entity_merge_ledger_outcome", "entity_merge_ledger")
    op.drop_column("entity_merge_ledger", "decided_at")
    op.drop_column("entity_merge_ledger", "outcome")
