"""A deletion sets the degrees of the entities it touches itself, in the rows it rewrites anyway.

The statement-level degree trigger of migration 0008 updates every endpoint of the deleted relations; a
deletion then rewrites most of those entities again with their rebuilt descriptions, so each got two new row
versions, and each version an entry in every index (the vector index included). Within a transaction that
sets `lightrag.degrees_by_caller` to 'on' (SET LOCAL), the trigger leaves degrees to the caller, which
writes them as counted from `relations` (app/repositories/deletion.py). Every other writer keeps the trigger.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23
"""

from __future__ import annotations

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

_BODY = """
CREATE OR REPLACE FUNCTION relations_degree_by_statement() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  {skip}
  IF TG_OP = 'INSERT' THEN
    UPDATE entities e SET degree = e.degree + d.n
      FROM (SELECT project_id, key, count(*)::int AS n
              FROM (SELECT project_id, src_key AS key FROM changed_rows
                    UNION ALL SELECT project_id, tgt_key FROM changed_rows) ends
             GROUP BY project_id, key) d
     WHERE e.project_id = d.project_id AND e.key = d.key;
  ELSE
    UPDATE entities e SET degree = e.degree - d.n
      FROM (SELECT project_id, key, count(*)::int AS n
              FROM (SELECT project_id, src_key AS key FROM changed_rows
                    UNION ALL SELECT project_id, tgt_key FROM changed_rows) ends
             GROUP BY project_id, key) d
     WHERE e.project_id = d.project_id AND e.key = d.key;
  END IF;
  RETURN NULL;
END $$;
"""
_SKIP = "IF current_setting('lightrag.degrees_by_caller', true) = 'on' THEN RETURN NULL; END IF;"


def upgrade() -> None:
    op.execute(_BODY.format(skip=_SKIP))


def downgrade() -> None:
    op.execute(_BODY.format(skip=""))
