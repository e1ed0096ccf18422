"""Which fields of an entity or relation were written by hand (`hand_fields`), where `curated` said only that
something was.

A deletion rebuild kept the whole text of a curated row: a type corrected by hand, a relation's weight set, a
rename or a merge kept descriptions extracted from the document being deleted. Now it keeps what a person wrote
(a hand-written description keeps the row's text; a hand-set type, keywords or weight stay on the rebuilt row) and
rebuilds the rest. `curated` is derived (any field by hand), as the API reports it. Rows curated before this
migration keep every field, as they did: what was written by hand there cannot be told apart.

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import ARRAY

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None

ALL_FIELDS = {"entities": "{description,entity_type}", "relations": "{description,keywords,weight}"}


def upgrade() -> None:
    for table, every in ALL_FIELDS.items():
        op.add_column(
            table, sa.Column("hand_fields", ARRAY(sa.Text), nullable=False, server_default=sa.text("'{}'::text[]"))
        )
        op.execute(f"UPDATE {table} SET hand_fields = '{every}' WHERE curated")
        op.drop_column(table, "curated")
        derived = sa.Computed("cardinality(hand_fields) > 0", persisted=True)
        op.add_column(table, sa.Column("curated", sa.Boolean, derived))


def downgrade() -> None:
    for table in ALL_FIELDS:
        op.add_column(table, sa.Column("curated_flag", sa.Boolean, nullable=False, server_default=sa.text("false")))
        op.execute(f"UPDATE {table} SET curated_flag = curated")
        op.drop_column(table, "curated")
        op.alter_column(table, "curated_flag", new_column_name="curated")
        op.drop_column(table, "hand_fields")
