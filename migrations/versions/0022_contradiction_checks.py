"""The documents whose check for contradicted merges is still owed: a document relating two writings of a
person's name ("Bob Everly" / "Robert Everly") gets a row in the transaction of its graph merge, removed once the
standing merge that joined the two is undone. A document that fails for good after its merge never retries, so any
worker sweeps the rows of documents no attempt is processing (app/services/ingest/contradiction_sweep.py).

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
    op.create_table(
        "contradiction_checks",
        sa.Column("project_id", sa.Text, nullable=False),
        sa.Column("document_id", sa.Text, nullable=False),
        sa.Column("taken_at", sa.DateTime(timezone=True)),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.PrimaryKeyConstraint("project_id", "document_id", name="pk_contradiction_checks"),
        sa.ForeignKeyConstraint(
            ["project_id", "document_id"],
            ["documents.project_id", "documents.id"],
            ondelete="CASCADE",
            name="fk_contradiction_checks_project_id_document_id_documents",
        ),
    )


def downgrade() -> None:
    op.drop_table("contradiction_checks")
