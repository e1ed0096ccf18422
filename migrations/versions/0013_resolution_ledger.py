"""Entity resolution across documents: a reversed-key index and the ledger of automatic merges.

The reversed key finds the people a surname alone may stand for ("okafor" → "ngozi okafor", "dr. okafor") by a
range scan, as the primary key already finds the names that start with a root. pg_trgm would serve both, but
the embedded PostgreSQL ships without it; near spellings are compared in Python among those candidates.

The ledger keeps one row per automatic merge: the names joined, the rule that joined them, its evidence and
the document that caused it (retroactive merges of an earlier node into a later full name included).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

_KEY = sa.Text(collation="C")


def upgrade() -> None:
    op.execute("CREATE INDEX IF NOT EXISTS ix_entities_project_id_reverse_key ON entities (project_id, reverse(key))")
    op.create_table(
        "entity_merge_ledger",
        sa.Column("id", sa.BigInteger, sa.Identity(), nullable=False),
        sa.Column("project_id", sa.Text, nullable=False),
        sa.Column("entity_key", _KEY, nullable=False),
        sa.Column("merged_key", _KEY, nullable=False),
        sa.Column("merged_name", sa.Text, nullable=False),
        sa.Column("rule", sa.Text, nullable=False),
        sa.Column("evidence", sa.Text, nullable=False, server_default=""),
        sa.Column("document_id", sa.Text),
        sa.Column("retroactive", sa.Boolean, nullable=False, server_default=sa.text("false")),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.PrimaryKeyConstraint("id", name="pk_entity_merge_ledger"),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"], ondelete="CASCADE", name="fk_entity_merge_ledger_project_id_projects"
        ),
    )
    op.create_index("ix_entity_merge_ledger_project_id_entity_key", "entity_merge_ledger", ["project_id", "entity_key"])


def downgrade() -> None:
    op.drop_table("entity_merge_ledger")
    op.execute("DROP INDEX IF EXISTS ix_entities_project_id_reverse_key")
