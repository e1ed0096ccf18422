"""Faster deletion rebuilds.

- chunks.extraction_records: the parsed extraction records of each chunk, stored when its extraction is
  saved, so deletion rebuilds read them instead of parsing the cached answers again
  (app/domain/chunk_records.py). NULL for chunks extracted before: those are parsed from the cache on
  rebuild, and their records stored then.
- Entity degrees follow inserted and deleted relations once per statement instead of once per relation row:
  deleting the 400 relations of a batch deletion updated each touched entity row (and so each of its
  indexes, the vector index included) once per relation end; now once per entity. Moving a relation to
  other keys (curation merges) keeps the row trigger.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

_DEGREE_BY_STATEMENT = """
CREATE FUNCTION relations_degree_by_statement() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
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


def upgrade() -> None:
    op.add_column("chunks", sa.Column("extraction_records", JSONB, nullable=True))
    op.execute(_DEGREE_BY_STATEMENT)
    op.execute("DROP TRIGGER trg_relations_degree ON relations")
    op.execute(
        "CREATE TRIGGER trg_relations_degree_insert AFTER INSERT ON relations REFERENCING NEW TABLE AS "
        "changed_rows FOR EACH STATEMENT EXECUTE FUNCTION relations_degree_by_statement()"
    )
    op.execute(
        "CREATE TRIGGER trg_relations_degree_delete AFTER DELETE ON relations REFERENCING OLD TABLE AS "
        "changed_rows FOR EACH STATEMENT EXECUTE FUNCTION relations_degree_by_statement()"
    )
    op.execute(
        "CREATE TRIGGER trg_relations_degree AFTER UPDATE OF src_key, tgt_key ON relations "
        "FOR EACH ROW EXECUTE FUNCTION relations_maintain_degree()"
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER trg_relations_degree ON relations")
    op.execute("DROP TRIGGER trg_relations_degree_delete ON relations")
    op.execute("DROP TRIGGER trg_relations_degree_insert ON relations")
    op.execute("DROP FUNCTION relations_degree_by_statement()")
    op.execute(
        "CREATE TRIGGER trg_relations_degree AFTER INSERT OR DELETE OR UPDATE OF src_key, tgt_key "
        "ON relations FOR EACH ROW EXECUTE FUNCTION relations_maintain_degree()"
    )
    op.drop_column("chunks", "extraction_records")
