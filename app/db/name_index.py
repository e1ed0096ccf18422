"""The name index rebuilt under today's rules, for migrations run when those rules change (sync connections:
Alembic's). Both are idempotent: `add_missing_match_keys` only adds entries (app/domain/match_index.py), and
`reindex_person_spellings` replaces the phonetic rows of people, which are an index nothing else refers to."""

from __future__ import annotations

import json
from collections.abc import Callable

import sqlalchemy as sa

from app.domain.match_index import missing_rows
from app.domain.name_designations import contraction_rows
from app.domain.name_matching import PERSON_TYPES
from app.domain.name_spellings import phonetic_index, phonetic_slots
from app.domain.resolution import MATCH_INDEX

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
_CUT_ROWS = sa.text("""
SELECT project_id, alias_key, entity_key FROM entity_aliases
 WHERE alias_key LIKE :pattern AND (project_id, alias_key) > (:project_id, :key)
 ORDER BY project_id, alias_key LIMIT :page
""")
_OLD_SPELLINGS = MATCH_INDEX + "\x1dspelt person %"
_DROP = sa.text("DELETE FROM entity_aliases WHERE alias_key LIKE :pattern")
_PEOPLE = sa.text("""
SELECT project_id, key, name, entity_type FROM entities
 WHERE lower(entity_type) = ANY(:types) AND (project_id, key) > (:project_id, :key)
 ORDER BY project_id, key LIMIT :page
""")


def _pages(conn: sa.Connection, statement: sa.TextClause, **params: object) -> list[tuple]:
    rows: list[tuple] = []
    after = ("", "")
    while True:
        page = conn.execute(statement, params | {"project_id": after[0], "key": after[1], "page": _PAGE}).all()
        rows += [tuple(r) for r in page]
        if len(page) < _PAGE:
            return rows
        after = (page[-1][0], page[-1][1])


def _add(conn: sa.Connection, rows: list[dict[str, str]]) -> None:
    for start in range(0, len(rows), _PAGE):
        conn.execute(_ADD, {"rows": json.dumps(rows[start : start + _PAGE])})


def add_missing_match_keys(conn: sa.Connection) -> None:
    """Every entity and project-wide alias gets an index entry under its match key by today's rules, where no
    entry holds that key yet."""
    rows = missing_rows(_pages(conn, _ENTITIES), _pages(conn, _ALIASES))
    _add(conn, [{"project_id": p, "alias_key": k, "entity_key": e, "alias_name": n} for p, k, e, n in rows])


def reindex_person_spellings(conn: sa.Connection) -> None:
    """Every stored person is recorded again under today's phonetic key (in the first free slot, in key order, as
    resolution records new entities), the rows under earlier keys removed."""
    conn.execute(_DROP, {"pattern": _OLD_SPELLINGS})
    people: dict[str, dict[str, tuple[str, str]]] = {}
    for project, key, name, entity_type in _pages(conn, _PEOPLE, types=sorted(PERSON_TYPES)):
        people.setdefault(project, {})[key] = (name, entity_type)
    _add_slots(conn, people, {}, phonetic_slots)


def add_place_cut_rows(conn: sa.Connection) -> None:
    """Every stored place gets the contraction rows today's rules record it under (a two-word place's dotted
    initials, where a name of its words cut short reads), in the first free slot, the rows already there kept."""
    stored: dict[str, dict[str, str]] = {}
    for project, row, key in _pages(conn, _CUT_ROWS, pattern=MATCH_INDEX + "\x1dcut %"):
        stored.setdefault(project, {})[row] = key
    places: dict[str, dict[str, tuple[str, str]]] = {}
    for project, key, name, entity_type in _pages(conn, _ENTITIES):
        if contraction_rows(name, entity_type):
            places.setdefault(project, {})[key] = (name, entity_type)
    _add_slots(conn, places, stored, contraction_rows)


def _add_slots(
    conn: sa.Connection,
    named_by_project: dict[str, dict[str, tuple[str, str]]],
    stored_by_project: dict[str, dict[str, str]],
    rows: Callable[[str, str], list[str]],
) -> None:
    """Each project's entities (key → (name, type)) recorded under their `rows` slots (`phonetic_index`: the
    first free slot, in key order), the stored rows (row → entity key) kept."""
    for project, named in named_by_project.items():
        index = phonetic_index(named, stored_by_project.get(project, {}), MATCH_INDEX, rows)
        _add(
            conn,
            [
                {"project_id": project, "alias_key": r, "entity_key": k, "alias_name": named[k][0]}
                for r, k in index.items()
            ],
        )
