"""Documents that change: a version number per document, the versions it went through, and pending updates.

An update is queued as a document row of its own (`update_of` names the document it updates), so the
worker, progress, cancel and retry treat it as any document while the current version keeps answering;
it cascades away with the document it updates. `document_versions` keeps one row per version the
document has had since its first update (content hash, length, chunk counts and what the update reused).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("documents", sa.Column("version", sa.Integer, nullable=False, server_default="1"))
    op.add_column("documents", sa.Column("update_of", sa.Text))
    op.create_foreign_key(
        "fk_documents_project_id_update_of_documents",
        "documents",
        "documents",
        ["project_id", "update_of"],
        ["project_id", "id"],
        ondelete="CASCADE",
    )
    op.create_index(
        "ix_documents_project_id_update_of",
        "documents",
        ["project_id", "update_of"],
        postgresql_where=sa.text("update_of IS NOT NULL"),
    )
    op.create_table(
        "document_versions",
        sa.Column("project_id", sa.Text, primary_key=True),
        sa.Column("document_id", sa.Text, primary_key=True),
        sa.Column("version", sa.Integer, primary_key=True),
        sa.Column("content_hash", sa.Text, nullable=False),
        sa.Column("content_length", sa.Integer, nullable=False),
        sa.Column("chunks_count", sa.Integer, nullable=False),
        sa.Column("chunks_reused", sa.Integer, nullable=False, server_default="0"),
        sa.Column("chunks_added", sa.Integer, nullable=False, server_default="0"),
        sa.Column("chunks_removed", sa.Integer, nullable=False, server_default="0"),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.ForeignKeyConstraint(
            ["project_id", "document_id"],
            ["documents.project_id", "documents.id"],
            ondelete="CASCADE",
            name="fk_document_versions_project_id_document_id_documents",
        ),
    )


def downgrade() -> None:
    op.drop_table("document_versions")
    op.drop_index("ix_documents_project_id_update_of", table_name="documents")
    op.drop_constraint("fk_documents_project_id_update_of_documents", "documents", type_="foreignkey")
    op.drop_column("documents", "update_of")
    op.drop_column("documents", "version")
