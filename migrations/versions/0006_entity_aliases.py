"""Entity resolution: per-project alias table, suggested duplicate pairs and remembered rejected pairs.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_KEY = sa.Text(collation="C")
_SOURCES = "('rule', 'acronym', 'partial', 'similarity', 'merge', 'manual')"


def _created_at() -> sa.Column:
    return sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now())


def _project_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["project_id"], ["projects.id"], ondelete="CASCADE", name=f"fk_{table}_project_id_projects"
    )


def upgrade() -> None:
    op.create_table(
        "entity_aliases",
        sa.Column("project_id", sa.Text, nullable=False),
        sa.Column("alias_key", _KEY, nullable=False),
        sa.Column("entity_key", _KEY, nullable=False),
        sa.Column("alias_name", sa.Text, nullable=False),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("document_id", sa.Text),
        _created_at(),
        sa.PrimaryKeyConstraint("project_id", "alias_key", name="pk_entity_aliases"),
        _project_fk("entity_aliases"),
        sa.CheckConstraint(f"source IN {_SOURCES}", name="ck_entity_aliases_source"),
    )
    op.create_index("ix_entity_aliases_project_id_entity_key", "entity_aliases", ["project_id", "entity_key"])
    for table, extra in (
        (
            "entity_suggestions",
            [
                sa.Column("score", sa.Float, nullable=False),
                sa.Column("evidence", sa.Text, nullable=False, server_default=""),
            ],
        ),
        ("entity_rejections", []),
    ):
        op.create_table(
            table,
            sa.Column("project_id", sa.Text, nullable=False),
            sa.Column("key_a", _KEY, nullable=False),
            sa.Column("key_b", _KEY, nullable=False),
            *extra,
            _created_at(),
            sa.PrimaryKeyConstraint("project_id", "key_a", "key_b", name=f"pk_{table}"),
            _project_fk(table),
            sa.CheckConstraint("key_a < key_b", name=f"ck_{table}_sorted_pair"),
        )


def downgrade() -> None:
    for table in ("entity_rejections", "entity_suggestions", "entity_aliases"):
        op.drop_table(table)
