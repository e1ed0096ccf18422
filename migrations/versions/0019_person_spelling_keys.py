"""Person spelling keys recomputed: a person's phonetic key is now one key per way the name sounds (given name
and family name each coded, app/domain/name_sounds.py), so the phonetic index rows of existing projects' people
(entity_aliases rows under "\\x1e\\x1dspelt person ...") are under keys nothing computes any more, and a later
spelling of a stored person would not find it. Those rows are removed and every stored person is recorded again
under today's key, in the first free slot, in key order (as resolution records new entities). Places' keys did
not change. The rows are an index only: a downgrade has nothing to restore.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-27
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

from app.domain.name_matching import PERSON_TYPES
from app.domain.name_spellings import phonetic_index, phonetic_slots
from app.domain.resolution import MATCH_INDEX

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

_PAGE = 5000
_OLD_ROWS = MATCH_INDEX + "\x1dspelt person %"
_DROP = sa.text("DELETE FROM entity_aliases WHERE alias_key LIKE :pattern")
_PEOPLE = sa.text("""
SELECT project_id, key, name, entity_type FROM entities
 WHERE lower(entity_type) = ANY(:types) AND (project_id, key) > (:project_id, :key)
 ORDER BY project_id, key LIMIT :page
""")
_ADD = sa.text("""
INSERT INTO entity_aliases (project_id, alias_key, entity_key, alias_name, source)
SELECT r.project_id, r.alias_key, r.entity_key, r.alias_name, 'rule'
  FROM jsonb_to_recordset(CAST(:rows AS jsonb)) AS r(project_id text, alias_key text, entity_key text, alias_name text)
ON CONFLICT (project_id, alias_key) DO NOTHING
""")


def _people(conn: sa.Connection) -> dict[str, dict[str, tuple[str, str]]]:
    """project → entity key → (name, type), for every stored person."""
    out: dict[str, dict[str, tuple[str, str]]] = {}
    after = ("", "")
    while True:
        page = conn.execute(
            _PEOPLE, {"types": sorted(PERSON_TYPES), "project_id": after[0], "key": after[1], "page": _PAGE}
        ).all()
        for project, key, name, entity_type in page:
            out.setdefault(project, {})[key] = (name, entity_type)
        if len(page) < _PAGE:
            return out
        after = (page[-1][0], page[-1][1])


def upgrade() -> None:
    conn = op.get_bind()
    conn.execute(_DROP, {"pattern": _OLD_ROWS})
    for project, people in _people(conn).items():
        index = phonetic_index(people, {}, MATCH_INDEX, phonetic_slots)
        rows = [
            {"project_id": project, "alias_key": row, "entity_key": key, "alias_name": people[key][0]}
            for row, key in index.items()
        ]
        for start in range(0, len(rows), _PAGE):
            conn.execute(_ADD, {"rows": json.dumps(rows[start : start + _PAGE])})


def downgrade() -> None:
    pass
