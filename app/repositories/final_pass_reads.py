"""The final pass's readings after a document's merge (services/ingest/absorb.py), in two round trips where
they took five: every document runs the pass, so each statement saved counts once per document.

`document_reading`: the document's nodes and, in the same statement, the acronyms it defines as one of them,
what every document defines those acronyms as, and the acronyms' own nodes. `near_reading`: the entities and
project-wide aliases near the nodes' names (NEARBY_SQL and ALIASES_NEAR_SQL) and the standing short-form merges
of their roots and surnames with their entities' names and types (as resolution_ledger.short_form_merges and
the ambiguity check's read of the entities); asked for the nodes' initials keys, also the standing merges of
those acronyms by their initials alone with their entities (as resolution_ledger.initials_merges and the
initials check's read of the entities: nearly every document has a name with initials, so this saves a round
trip for nearly every document). tests/ingest/test_final_pass_reads.py keeps the separate reads they replaced
and checks that both give the same rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from sqlalchemy import TextClause, text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.domain.cross_document import Ranges
from app.domain.name_index import Nearby
from app.repositories.resolution_ledger import (
    ALIASES_NEAR_SQL,
    BY_INITIALS_WHERE,
    NEARBY_SQL,
    SHORT_FORMS_WHERE,
    NearAlias,
    ShortFormMerge,
    near_params,
    packed,
    short_form_params,
)

_DOCUMENT_CTES = """
WITH mine AS (
    SELECT e.key, e.name, e.entity_type FROM entities e
     WHERE e.project_id = :project_id
       AND e.key IN (SELECT s.entity_key FROM entity_sources s
                      WHERE s.project_id = :project_id AND s.document_id = :document_id)
), here AS (
    SELECT split_part(a.alias_key, chr(31), 1) AS key, a.entity_key FROM entity_aliases a
     WHERE a.project_id = :project_id AND a.entity_key IN (SELECT key FROM mine)
       AND a.document_id = :document_id AND a.source = 'acronym'
)
"""
_DOCUMENT_ROWS = """
SELECT 'm' AS kind, key, name, entity_type FROM mine
UNION ALL
SELECT 'h', key, entity_key, NULL FROM here
UNION ALL
SELECT 'd', k.key, a.entity_key, NULL
  FROM (SELECT DISTINCT key FROM here) k
  JOIN entity_aliases a ON a.project_id = :project_id AND a.source = 'acronym'
   AND (a.alias_key = k.key OR (a.alias_key >= k.key || chr(31) AND a.alias_key < k.key || chr(32)))
UNION ALL
SELECT 'x', e.key, e.name, e.entity_type FROM entities e
 WHERE e.project_id = :project_id AND e.key IN (SELECT key FROM here)
"""
_DOCUMENT = text(_DOCUMENT_CTES + _DOCUMENT_ROWS)


@dataclass
class DocumentReading:
    mine: Nearby  # the document's nodes: key → (name, type)
    here: dict[str, str] = field(default_factory=dict)  # acronym key → the node of `mine` the document defines it as
    everywhere: dict[str, set[str]] = field(default_factory=dict)  # those acronyms → every entity defined as
    acronym_nodes: Nearby = field(default_factory=dict)  # those acronyms' own nodes


async def document_reading(conn: AsyncConnection, project_id: str, document_id: str) -> DocumentReading:
    rows = (await conn.execute(_DOCUMENT, {"project_id": project_id, "document_id": document_id})).all()
    return _document(rows)


def _document(rows: Sequence[Sequence[Any]]) -> DocumentReading:
    out = DocumentReading({k: (n, t) for kind, k, n, t in rows if kind == "m"})
    out.here = {k: e for kind, k, e, _ in rows if kind == "h"}
    for kind, key, entity, _ in rows:
        if kind == "d":
            out.everywhere.setdefault(key, set()).add(entity)
    out.acronym_nodes = {k: (n, t) for kind, k, n, t in rows if kind == "x"}
    return out


def _merges_part(kind: str, where: str) -> str:
    """The ledger rows `where` selects, as rows of `kind`, each with its entity (name, type) if it still exists."""
    return f"""UNION ALL
SELECT '{kind}', l.id, l.entity_key, l.merged_key, l.merged_name, l.rule, l.evidence, l.retroactive, e.name,
       e.entity_type
  FROM entity_merge_ledger l
  LEFT JOIN entities e ON e.project_id = :project_id AND e.key = l.entity_key
 WHERE {where}
"""


# the entities and aliases in the ranges, and the standing short-form merges of `short_form_params`' words and
# patterns
_NEAR_SQL = f"""
SELECT 'e' AS kind, CAST(NULL AS bigint) AS id, n.key, n.name, n.entity_type, CAST(NULL AS text) AS a,
       CAST(NULL AS text) AS b, CAST(NULL AS boolean) AS retro, CAST(NULL AS text) AS c, CAST(NULL AS text) AS d
  FROM ({NEARBY_SQL}) n
UNION ALL
SELECT 'a', NULL, a.alias_key, a.alias_name, a.key, a.name, a.entity_type, NULL, NULL, NULL
  FROM ({ALIASES_NEAR_SQL}) a
{_merges_part("s", SHORT_FORMS_WHERE)}"""
# asked with initials keys: resolution_ledger.initials_merges' rows
_INITIALS_SQL = _merges_part("i", BY_INITIALS_WHERE)
# both readings at once: the document's rows come back as kind 'document', their own kind in the `a` column
_DOCUMENT_PART = f"""
UNION ALL
SELECT 'document', NULL, d.key, d.name, d.entity_type, d.kind, NULL, NULL, NULL, NULL FROM ({_DOCUMENT_ROWS}) d
"""


@lru_cache(maxsize=4)
def _near(document: bool, initials: bool) -> TextClause:
    """The statement with the parts a reading asks for (the server plans every part on each call, even over an
    empty array: the initials' part is left out when no initials keys are asked)."""
    return text(
        (_DOCUMENT_CTES if document else "")
        + _NEAR_SQL
        + (_INITIALS_SQL if initials else "")
        + (_DOCUMENT_PART if document else "")
    )


@dataclass
class NearReading:
    near: Nearby
    aliases: dict[str, NearAlias]
    merges: list[ShortFormMerge]  # ordered by ledger id, as short_form_merges reads them
    targets: Nearby  # the merges' entities that exist: key → (name, type)
    # asked with initials keys (else None): their standing merges by initials alone, ordered by ledger id as
    # resolution_ledger.initials_merges reads them, and those merges' entities that exist
    initials: list[ShortFormMerge] | None = None
    initials_targets: Nearby = field(default_factory=dict)


async def near_reading(
    conn: AsyncConnection,
    project_id: str,
    ranges: Ranges,
    words: Sequence[str],
    initials: Sequence[str] | None = None,
) -> NearReading:
    """In one statement: the entities in `ranges`, the project-wide aliases in their exact keys and prefixes, and
    the standing merges of a short form that is one of `words` or ends with one, with their entities; with
    `initials` (acronym keys), also the standing merges of those acronyms by their initials alone, with their
    entities (none read, and `initials` [] in the reading, when the list is empty)."""
    out = NearReading({}, {}, [], {}, [] if initials is not None else None)
    keys = sorted(initials or ())
    if not (ranges.prefixes or ranges.reversed_prefixes or ranges.exact or words or keys):
        return out
    params = _near_params(project_id, ranges, words, keys)
    return _near_rows((await conn.execute(_near(False, bool(keys)), params)).all(), initials is not None)


async def document_and_near(
    conn: AsyncConnection,
    project_id: str,
    document_id: str,
    ranges: Ranges,
    words: Sequence[str],
    initials: Sequence[str] | None = None,
) -> tuple[DocumentReading, NearReading]:
    """`document_reading` and `near_reading` in one statement, for a caller that knows the document's nodes
    before reading them (and so the ranges, words and initials keys near them): the one that merged them."""
    keys = sorted(initials or ())
    params = {"document_id": document_id, **_near_params(project_id, ranges, words, keys)}
    rows = (await conn.execute(_near(True, bool(keys)), params)).all()
    document = _document([(r[5], r[2], r[3], r[4]) for r in rows if r[0] == "document"])
    return document, _near_rows([r for r in rows if r[0] != "document"], initials is not None)


def _near_params(project_id: str, ranges: Ranges, words: Sequence[str], initials: Sequence[str]) -> dict[str, str]:
    """The parameters of `_near`'s statement (the initials' only when some are asked)."""
    params = {"project_id": project_id, **near_params(ranges), **short_form_params(words)}
    if initials:
        params["initials"] = packed(initials)
    return params


def _near_rows(rows: Sequence[Sequence[Any]], with_initials: bool) -> NearReading:
    out = NearReading({}, {}, [], {}, [] if with_initials else None)
    for kind, id_, x, y, z, a, b, retro, name, etype in rows:
        if kind == "e":
            out.near[x] = (y, z)
        elif kind == "a":
            out.aliases[x] = NearAlias(y, z, a, b)
        elif kind == "i":
            assert out.initials is not None, "initials' rows only when asked"
            out.initials.append(replace(ShortFormMerge(id_, x, y, z, a, b, retro), acronym=True))
            if name is not None:
                out.initials_targets[x] = (name, etype)
        else:
            out.merges.append(ShortFormMerge(id_, x, y, z, a, b, retro))
            if name is not None:
                out.targets[x] = (name, etype)
    out.merges.sort(key=lambda m: m.id)
    if out.initials is not None:
        out.initials.sort(key=lambda m: m.id)
    return out
