"""Match keys recomputed: the match-key rules changed (possessives, letters with a stroke, St./Mt./Ft., ordinals,
years, family name first, common diminutives, Roman numerals), so the match-key index entries of existing projects
(entity_aliases rows whose key starts with U+001E) are added under today's keys for every entity and every
project-wide alias (app/domain/match_index.py). Rows already holding a key are kept; nothing is removed, so a
downgrade has nothing to undo. A later change of the rules adds another migration of this kind.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from app.domain.match_index import missing_rows

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

_PAGE = 5000
_ENTITIES = sa.text("""
SELECT project_id, key, name, entity_type FROM entities
 WHERE (project_id, key) > (:project_id, :key) ORDER BY project_id, key LIMIT :page
""")
_ALIASES = sa.text("""
SELECT a.project_id, a.alias_key, a.alias_name, a.entity_key, e.entity_type
  FROM entity_aliases a JOIN entities e ON e.project_id = a.project_id AND e.key = a.entity_key
 WHERE (a.project_id, a.alias_key) > (:project_id, :key) ORDER BY a.project_id, a.alias_key LIMIT :page
""")
_ADD = sa.text("""
INSERT INTO entity_aliases (project_id, alias_key, entity_key, alias_name, source)
SELECT r.project_id, r.alias_key, r.entity_key, r.alias_name, 'rule'
  FROM jsonb_to_recordset(CAST(:rows AS jsonb)) AS r(project_id text, alias_key text, entity_key text, alias_name text)
ON CONFLICT (project_id, alias_key) DO NOTHING
""")


def _pages(conn: sa.Connection, statement: sa.TextClause) -> list[tuple]:
    rows: list[tuple] = []
    after = ("", "")
    while True:
        page = conn.execute(statement, {"project_id": after[0], "key": after[1], "page": _PAGE}).all()
        rows += [tuple(r) for r in page]
        if len(page) < _PAGE:
            return rows
        after = (page[-1][0], page[-1][1])


def upgrade() -> None:
    import json

    conn = op.get_bind()
    rows = missing_rows(_pages(conn, _ENTITIES), _pages(conn, _ALIASES))
    for start in range(0, len(rows), _PAGE):
        page = [
            {"project_id": p, "alias_key": k, "entity_key": e, "alias_name": n}
            for p, k, e, n in rows[start : start + _PAGE]
        ]
        conn.execute(_ADD, {"rows": json.dumps(page)})


def downgrade() -> None:
    pass
