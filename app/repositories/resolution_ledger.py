"""SQL for resolution across documents (migration 0013): the entities near a document's names, read by key
ranges, and the ledger of automatic merges."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from sqlalchemy import bindparam, select, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables import entity_merge_ledger
from app.domain.aliases import AliasItem
from app.domain.cross_document import Ranges
from app.domain.name_index import Nearby
from app.repositories.aliases import ADD_ALIASES_SQL, alias_rows

_PER_RANGE = 20  # more entities than this under one root or surname: ambiguous whatever they are

# Key lists go to the server as one text each, split there (`keys_sql`), not as text[] parameters: asyncpg checks
# each element of an array parameter against two abstract classes before encoding it (about 0.5 µs an element
# here), and a decision's reading sends some 500 keys, the final pass's some 150, for every document. The keys
# are names' keys, which hold no control character (app/domain/names.py drops them), and the app's own alias
# keys, whose only control characters are their prefixes (\x1d, \x1e) and the scope separator (\x1f).
KEY_SEPARATOR = "\x1c"


def keys_sql(param: str) -> str:
    """The SQL array of the keys `packed` into the parameter `param`."""
    return f"string_to_array(CAST(:{param} AS text), chr(28))"


def packed(keys: Sequence[str]) -> str:
    """`keys` as one parameter for `keys_sql` (no key may be empty or hold the separator)."""
    if not keys:
        return ""  # string_to_array('', ...) is the empty array
    joined = KEY_SEPARATOR.join(keys)
    if joined.count(KEY_SEPARATOR) != len(keys) - 1 or not all(keys):
        raise ValueError(f"a key list that cannot be packed: {[k for k in keys if not k or KEY_SEPARATOR in k]!r}")
    return joined


# A prefix's range ends before the prefix with its last character one code point on, worked out by the server so
# that only the prefixes are sent: a decision's reading asks for a hundred or so (resolution_reads.py).
_UPPER_SQL = "left(r.lo, -1) || chr(ascii(right(r.lo, 1)) + 1)"

# Each range is a scan of an index (the primary key, or the reversed key of migration 0013), cut at a few rows.
# Parameters: `near_params`. Also part of the reading a resolution decision is taken on (resolution_reads.py).
NEARBY_SQL = f"""
SELECT e.key, e.name, e.entity_type FROM entities e
 WHERE e.project_id = :project_id AND e.key IN (SELECT unnest({keys_sql("exact")}))
UNION
SELECT x.key, x.name, x.entity_type
  FROM unnest({keys_sql("lo")}) AS r(lo),
       LATERAL (SELECT e.key, e.name, e.entity_type FROM entities e
                 WHERE e.project_id = :project_id AND e.key >= r.lo AND e.key < {_UPPER_SQL}
                 LIMIT {_PER_RANGE}) x
UNION
SELECT x.key, x.name, x.entity_type
  FROM unnest({keys_sql("rlo")}) AS r(lo),
       LATERAL (SELECT e.key, e.name, e.entity_type FROM entities e
                 WHERE e.project_id = :project_id AND reverse(e.key) >= r.lo AND reverse(e.key) < {_UPPER_SQL}
                 LIMIT {_PER_RANGE}) x
"""
_NEARBY = text(NEARBY_SQL)


def near_params(ranges: Ranges) -> dict[str, str]:
    """The parameters of NEARBY_SQL (and of ALIASES_NEAR_SQL, which reads the first two) for `ranges`."""
    return {
        "exact": packed(sorted(ranges.exact)),
        "lo": packed(sorted(ranges.prefixes)),
        "rlo": packed(sorted(ranges.reversed_prefixes)),
    }


async def entities_near(conn: AsyncConnection, project_id: str, ranges: Ranges) -> Nearby:
    """key → (name, type) of the entities in `ranges` (one statement; nothing is read for empty ranges)."""
    if not (ranges.prefixes or ranges.reversed_prefixes or ranges.exact):
        return {}
    rows = await conn.execute(_NEARBY, {"project_id": project_id, **near_params(ranges)})
    return {k: (n, t) for k, n, t in rows.all()}


_DOCUMENT_NODES = text("""
SELECT e.key, e.name, e.entity_type FROM entities e
 WHERE e.project_id = :project_id
   AND e.key IN (SELECT s.entity_key FROM entity_sources s
                  WHERE s.project_id = :project_id AND s.document_id = :document_id)
""")


async def document_nodes(conn: AsyncConnection, project_id: str, document_id: str) -> Nearby:
    """key → (name, type) of the entities with provenance in the document, in one statement."""
    rows = await conn.execute(_DOCUMENT_NODES, {"project_id": project_id, "document_id": document_id})
    return {k: (n, t) for k, n, t in rows.all()}


@dataclass(frozen=True)
class LedgerItem:
    entity_key: str
    merged_key: str
    merged_name: str
    rule: str
    evidence: str
    document_id: str | None
    retroactive: bool = False


_ADD_SQL = """
INSERT INTO entity_merge_ledger (project_id, entity_key, merged_key, merged_name, rule, evidence, document_id,
                                 retroactive)
SELECT :project_id, r.entity_key, r.merged_key, r.merged_name, r.rule, r.evidence, r.document_id, r.retroactive
  FROM jsonb_to_recordset(:ledger) AS r(entity_key text, merged_key text, merged_name text, rule text,
                                        evidence text, document_id text, retroactive boolean)
"""
_ADD = text(_ADD_SQL).bindparams(bindparam("ledger", type_=JSONB))
# A merge's new aliases (aliases.add_aliases_of) and its ledger entries in one round trip, under its key locks
_ADD_WITH_ALIASES = text(f"WITH written AS ({ADD_ALIASES_SQL} RETURNING 1) {_ADD_SQL}").bindparams(
    bindparam("rows", type_=JSONB), bindparam("ledger", type_=JSONB)
)


async def add(conn: AsyncConnection, project_id: str, items: Sequence[LedgerItem]) -> None:
    if items:
        await conn.execute(_ADD, {"project_id": project_id, "ledger": [i.__dict__ for i in items]})


@dataclass(frozen=True)
class Recorded:
    """A merge's new aliases (by entity key) and ledger entries, as `add_with_aliases` writes them."""

    aliases: Mapping[str, Sequence[AliasItem]]
    items: Sequence[LedgerItem]

    def params(self) -> dict[str, object]:
        """The parameters of RECORDED_SQL (the project's id aside): none when there is nothing to write."""
        rows = alias_rows(self.aliases)
        if not (rows or self.items):
            return {}
        return {"rows": rows, "overwrite": False, "ledger": [i.__dict__ for i in self.items]}


# `add_with_aliases` as the WITH list of another statement of the merge (merge_writes.py), one round trip fewer
RECORDED_SQL = f"written AS ({ADD_ALIASES_SQL} RETURNING 1), ledger AS ({_ADD_SQL} RETURNING 1)"


async def add_with_aliases(
    conn: AsyncConnection, project_id: str, aliases: Mapping[str, Sequence[AliasItem]], items: Sequence[LedgerItem]
) -> None:
    """aliases.add_aliases_of (aliases by entity key, an alias already naming another existing entity kept) and
    `add` in one statement."""
    if params := Recorded(aliases, items).params():
        await conn.execute(_ADD_WITH_ALIASES, {"project_id": project_id, **params})


async def entries(conn: AsyncConnection, project_id: str, entity_key: str | None = None) -> list[LedgerItem]:
    """The ledger, oldest first (of one entity when `entity_key` is given)."""
    t = entity_merge_ledger.c
    query = select(t.entity_key, t.merged_key, t.merged_name, t.rule, t.evidence, t.document_id, t.retroactive).where(
        t.project_id == project_id
    )
    if entity_key is not None:
        query = query.where(t.entity_key == entity_key)
    rows = await conn.execute(query.order_by(t.id))
    return [LedgerItem(*row) for row in rows.all()]


# Project-wide aliases (not scoped, not the match-key index) whose entity still exists, by exact key or key prefix:
# an earlier short node may fit a name that is now only an alias ("Terralink X7", absorbed into "Pellucid
# Terralink X7").
ALIASES_NEAR_SQL = f"""
SELECT x.alias_key, x.alias_name, e.key, e.name, e.entity_type
  FROM (SELECT a.alias_key, a.alias_name, a.entity_key FROM entity_aliases a
         WHERE a.project_id = :project_id AND a.alias_key = ANY({keys_sql("exact")})
        UNION
        SELECT y.alias_key, y.alias_name, y.entity_key
          FROM unnest({keys_sql("lo")}) AS r(lo),
               LATERAL (SELECT a.alias_key, a.alias_name, a.entity_key FROM entity_aliases a
                         WHERE a.project_id = :project_id AND a.alias_key >= r.lo AND a.alias_key < {_UPPER_SQL}
                         LIMIT {_PER_RANGE}) y) x
  JOIN entities e ON e.project_id = :project_id AND e.key = x.entity_key
 WHERE strpos(x.alias_key, chr(31)) = 0 AND strpos(x.alias_key, chr(30)) = 0
"""


@dataclass(frozen=True)
class NearAlias:
    name: str  # the alias as written
    entity_key: str
    entity_name: str
    entity_type: str


@dataclass(frozen=True)
class ShortFormMerge:
    """A standing automatic merge of a surname or root written alone into an entity."""

    id: int
    entity_key: str
    merged_key: str
    merged_name: str
    rule: str
    evidence: str
    retroactive: bool
    acronym: bool = False  # an undefined acronym's merge: its restoring keeps the definitions' scoped aliases


# A scan of the project's ledger rows of these two rules (short forms are a small share of the merges).
SHORT_FORMS_WHERE = f"""l.project_id = :project_id AND l.rule IN ('partial', 'root') AND l.outcome IS NULL
   AND (l.merged_key = ANY({keys_sql("words")}) OR l.merged_key LIKE ANY({keys_sql("patterns")}))"""
_SHORT_FORMS = text(f"""
SELECT l.id, l.entity_key, l.merged_key, l.merged_name, l.rule, l.evidence, l.retroactive
  FROM entity_merge_ledger l
 WHERE {SHORT_FORMS_WHERE}
 ORDER BY l.id
""")


def short_form_params(words: Sequence[str]) -> dict[str, str]:
    """The parameters of SHORT_FORMS_WHERE (also read by final_pass_reads.py) for `words`."""
    escaped = [w.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") for w in sorted(words)]
    return {"words": packed(sorted(words)), "patterns": packed([f"% {w}" for w in escaped])}


async def short_form_merges(conn: AsyncConnection, project_id: str, words: Sequence[str]) -> list[ShortFormMerge]:
    """The standing merges of a short form that is one of `words` or ends with one ("dr. okafor" for "okafor")."""
    if not words:
        return []
    params = {"project_id": project_id, **short_form_params(words)}
    return [ShortFormMerge(*row) for row in (await conn.execute(_SHORT_FORMS, params)).all()]


# An acronym joined across documents by its initials alone (app/domain/resolution.py `_initials`, or absorbed
# by app/domain/absorption.py `lone_fit`): not by a definition, nor by a full name in the acronym's document.
# Also read by the final pass's statement (final_pass_reads.py), its keys as `:initials`.
BY_INITIALS_WHERE = f"""l.project_id = :project_id AND l.merged_key = ANY({keys_sql("initials")})
   AND l.outcome IS NULL AND l.rule = 'acronym' AND l.evidence LIKE '% are the initials of % in the project'"""
_BY_INITIALS = text(f"""
SELECT l.id, l.entity_key, l.merged_key, l.merged_name, l.rule, l.evidence, l.retroactive
  FROM entity_merge_ledger l
 WHERE {BY_INITIALS_WHERE}
 ORDER BY l.id
""")


async def initials_merges(conn: AsyncConnection, project_id: str, keys: Sequence[str]) -> list[ShortFormMerge]:
    """The standing merges of the acronym nodes `keys` into an entity their initials were the only fit of (each
    undone alone: other merges of the acronym, by a definition, stand)."""
    if not keys:
        return []
    params = {"project_id": project_id, "initials": packed(sorted(keys))}
    return [replace(ShortFormMerge(*row), acronym=True) for row in (await conn.execute(_BY_INITIALS, params)).all()]


# A document's own definition is its non-retroactive entry saying so (app/domain/resolution.py); any other
# standing merge of the acronym is of a use that did not say what it stands for
_UNDEFINED_USES = text("""
SELECT l.id, l.entity_key, l.merged_key, l.merged_name, l.rule, l.evidence, l.retroactive
  FROM entity_merge_ledger l
 WHERE l.project_id = :project_id AND l.merged_key = ANY(CAST(:keys AS text[])) AND l.outcome IS NULL
   AND (l.retroactive OR l.evidence NOT LIKE 'the document defines %')
 ORDER BY l.id
""")


async def undefined_uses(conn: AsyncConnection, project_id: str, keys: Sequence[str]) -> list[ShortFormMerge]:
    """The standing merges of the acronyms `keys` that no definition in the merged document made."""
    params = {"project_id": project_id, "keys": sorted(keys)}
    return [replace(ShortFormMerge(*row), acronym=True) for row in (await conn.execute(_UNDEFINED_USES, params)).all()]
