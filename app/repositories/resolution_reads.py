"""The reading a resolution decision is taken on (services/ingest/name_resolution.py), in one round trip: every
document's merge reads it under its key locks (and before them when the locks are not guessed), so each
statement saved counts once or twice per document.

One statement returns, by kind: the aliases among the document's keys that name an existing entity ('a'), the
types of its keys and of those targets ('t'), the rejected pairs touching its names ('r'), the entities near
its names ('n', resolution_ledger.NEARBY_SQL), per undefined acronym, the first entities whose keys fit its
initials ('p', as aliases.keys_by_prefix reads them), and the entities any document defines those acronyms as
('d': their acronym aliases, scoped to a document or not). The last two parts are in the statement only when
the document has an undefined acronym: the server plans every part on each call, even over an empty array.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from sqlalchemy import TextClause, text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.domain.aliases import scoped_key
from app.domain.cross_document import Ranges, prefix_end
from app.domain.document_rows import HeldClaim
from app.domain.name_index import Nearby
from app.repositories.documents import HELD_CLAIM_SQL
from app.repositories.resolution_ledger import NEARBY_SQL, keys_sql, near_params, packed

Pair = tuple[str, str]

_READING_SQL = f"""
WITH {{claim}}al AS (
    SELECT a.alias_key, a.entity_key FROM entity_aliases a
     WHERE a.project_id = :project_id AND a.alias_key IN (SELECT unnest({keys_sql("stored")}))
       AND EXISTS (SELECT 1 FROM entities e WHERE e.project_id = :project_id AND e.key = a.entity_key)
)
SELECT 'a' AS kind, 0 AS n, alias_key AS x, entity_key AS y, CAST(NULL AS text) AS z FROM al
UNION ALL
SELECT 't', 0, e.key, e.entity_type, NULL FROM entities e
 WHERE e.project_id = :project_id
   AND e.key IN (SELECT unnest({keys_sql("keys")}) UNION ALL SELECT entity_key FROM al)
UNION ALL
SELECT 'r', 0, r.key_a, r.key_b, NULL FROM entity_rejections r
 WHERE r.project_id = :project_id
   AND (r.key_a = ANY({keys_sql("names")}) OR r.key_b = ANY({keys_sql("names")}))
UNION ALL
SELECT 'n', 0, near.key, near.name, near.entity_type FROM ({NEARBY_SQL}) near{{initials}}{{defined}}{{claimed}}
"""
_INITIALS_SQL = """
UNION ALL
SELECT 'p', i.n, x.key, x.entity_type, CAST(x.rank AS text)
  FROM unnest(CAST(:patterns AS text[]), CAST(:firsts AS text[]), CAST(:uppers AS text[]))
       WITH ORDINALITY AS i(pattern, first, upper, n),
       LATERAL (SELECT y.key, y.entity_type, row_number() OVER (ORDER BY y.key) AS rank
                  FROM (SELECT e.key, e.entity_type FROM entities e
                         WHERE e.project_id = :project_id AND e.key >= i.first AND e.key < i.upper
                           AND e.key ~ i.pattern
                         ORDER BY e.key LIMIT 20) y) x"""
_DEFINED_SQL = """
UNION ALL
SELECT DISTINCT 'd', 0, k.key, a.entity_key, NULL
  FROM unnest(CAST(:acronyms AS text[])) AS k(key)
  JOIN entity_aliases a ON a.project_id = :project_id AND a.source = 'acronym'
   AND (a.alias_key = k.key OR (a.alias_key >= k.key || chr(31) AND a.alias_key < k.key || chr(32)))
 WHERE EXISTS (SELECT 1 FROM entities e WHERE e.project_id = :project_id AND e.key = a.entity_key)"""
# Under the key locks the document's claim is checked in the same statement (documents.lock_claim's read: its
# row locked if `worker_id` still holds it), one round trip fewer per merge. The reading's snapshot is taken once
# the key locks are held, as before; only a wait for the document's own row (a progress write) may now come after.
_CLAIMED_SQL = """
UNION ALL
SELECT 'c', 0, h.id, CAST(h.graph_merged AS text), CAST(h.cancel_requested AS text) FROM held h"""


@lru_cache(maxsize=8)
def _reading(initials: bool, defined: bool, claimed: bool) -> TextClause:
    """The statement with the parts a reading asks for."""
    return text(
        _READING_SQL.format(
            claim=f"held AS ({HELD_CLAIM_SQL}), " if claimed else "",
            initials=_INITIALS_SQL if initials else "",
            defined=_DEFINED_SQL if defined else "",
            claimed=_CLAIMED_SQL if claimed else "",
        )
    )


@dataclass(frozen=True)
class Initials:
    """An acronym's initials as aliases.keys_by_prefix reads them: a POSIX pattern and the keys' first letter."""

    pattern: str
    first: str


@dataclass
class Reading:
    aliases: dict[str, str]  # alias key → entity key (a scoped alias winning over a project-wide one)
    types: dict[str, str]  # entity key → type, of the keys asked and the aliases' targets
    rejected: set[Pair]
    nearby: Nearby
    by_initials: list[list[tuple[str, str]]]  # per `Initials` asked, in order: (key, type) ordered by key
    defined_as: dict[str, set[str]]  # acronym key asked → the entities documents define it as
    claim: HeldClaim | None = None  # asked with `worker_id`: the claim if still held (its row now locked)


async def decision_reading(
    conn: AsyncConnection,
    project_id: str,
    document_id: str,
    alias_keys: Iterable[str],
    type_keys: Iterable[str],
    names: Iterable[str],
    ranges: Ranges,
    initials: Sequence[Initials],
    acronyms: Iterable[str] = (),
    worker_id: str | None = None,
) -> Reading:
    """In one statement: alias key → entity key for `alias_keys` that name an existing entity, an alias scoped
    to `document_id` winning over a project-wide one; the types of `type_keys` and of those targets; the
    rejected pairs that involve any of `names`; the entities in `ranges`; the first 20 keys (by key) fitting
    each of `initials`; the entities the acronym keys `acronyms` are defined as, in any document. With
    `worker_id`, inside a transaction: also the document's claim, its row locked, if that worker still holds it."""
    wanted = sorted(set(alias_keys))
    # sent as one list, not built by the server from `wanted`, and matched as a set (IN (SELECT unnest(...))), not
    # by `= ANY`: the statement is prepared, and after five runs the server keeps a generic plan, where the array is
    # a parameter, not a constant it hashes; `= ANY` then compares each row with every key (25-30 ms against 3-5 for
    # a reading of 1,700 keys), the set is hashed or probed in the index whichever plan runs
    scoped = [scoped_key(k, document_id) for k in wanted]
    stored = wanted + scoped
    params: dict[str, str | list[str]] = {
        "project_id": project_id,
        "stored": packed(stored),
        "keys": packed(sorted(set(type_keys))),
        "names": packed(sorted(set(names))),
        **near_params(ranges),
    }
    if initials:
        firsts = [i.first for i in initials]
        params |= {"patterns": [i.pattern for i in initials], "firsts": firsts, "uppers": list(map(prefix_end, firsts))}
    if defined := sorted(set(acronyms)):
        params["acronyms"] = defined
    if worker_id is not None:
        params |= {"document_id": document_id, "worker_id": worker_id}
    rows = (await conn.execute(_reading(bool(initials), bool(defined), worker_id is not None), params)).all()
    found: dict[str, str] = {}
    types: dict[str, str] = {}
    rejected: set[Pair] = set()
    nearby: Nearby = {}
    by_initials: list[list[tuple[int, str, str]]] = [[] for _ in initials]
    defined_as: dict[str, set[str]] = {}
    claim: HeldClaim | None = None
    for kind, n, x, y, z in rows:  # one pass: a reading returns tens of rows, and every document takes one or two
        if kind == "a":
            found[x] = y
        elif kind == "t":
            types[x] = y
        elif kind == "r":
            rejected.add((x, y))
        elif kind == "n":
            nearby[x] = (y, z)
        elif kind == "p":
            by_initials[n - 1].append((int(z), x, y))
        elif kind == "d":
            defined_as.setdefault(x, set()).add(y)
        elif kind == "c" and claim is None:
            claim = HeldClaim(x, y == "true", z == "true")
    aliases = {k: found[k] for k in wanted if k in found}
    aliases.update({k: e for k, s in zip(wanted, scoped, strict=True) if (e := found.get(s))})
    return Reading(
        aliases,
        types,
        rejected,
        nearby,
        [[(k, t) for _, k, t in sorted(fits)] for fits in by_initials],
        defined_as,
        claim,
    )
