"""SQL for entity resolution: aliases, suggested duplicate pairs and rejected pairs (migration 0006).

Aliases map the key of a surface form to the entity it names. Callers writing aliases hold the key locks
of the entity and of the alias keys (graph_repo.lock_keys), as for any graph write.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from sqlalchemy import and_, bindparam, delete, exists, select, text, update
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables import chunks, entities, entity_aliases, entity_rejections, entity_suggestions
from app.domain.aliases import AliasItem, AliasRow, SuggestionItem, SuggestionRow
from app.domain.cross_document import prefix_end
from app.domain.names import sorted_pair
from app.domain.resolution import MATCH_INDEX
from app.repositories.graph import any_of, pair_rows

Pair = tuple[str, str]
_A = entity_aliases.c


async def add_aliases(
    conn: AsyncConnection, project_id: str, entity_key: str, items: Sequence[AliasItem], *, overwrite: bool = False
) -> int:
    """Record aliases of `entity_key` (an alias of itself is skipped). An alias key already naming another
    entity keeps it unless `overwrite` (manual merges) or that entity no longer exists. Returns rows written."""
    return await add_aliases_of(conn, project_id, {entity_key: items}, overwrite=overwrite)


# One statement text whatever the number of aliases (a multi-row VALUES list would be prepared anew for
# every row count, inside the merge transaction that holds the key locks). Parameters: `alias_rows`, :overwrite.
ADD_ALIASES_SQL = """
INSERT INTO entity_aliases AS a (project_id, alias_key, entity_key, alias_name, source, document_id)
SELECT :project_id, r.alias_key, r.entity_key, r.alias_name, r.source, r.document_id
  FROM jsonb_to_recordset(:rows) AS r(alias_key text, entity_key text, alias_name text, source text,
                                      document_id text)
ON CONFLICT (project_id, alias_key) DO UPDATE
   SET entity_key = excluded.entity_key, alias_name = excluded.alias_name, source = excluded.source,
       document_id = excluded.document_id, created_at = now()
 WHERE :overwrite OR a.entity_key = excluded.entity_key
    OR NOT EXISTS (SELECT 1 FROM entities e WHERE e.project_id = a.project_id AND e.key = a.entity_key)
"""
_ADD_ALIASES = text(ADD_ALIASES_SQL).bindparams(bindparam("rows", type_=JSONB))


def alias_rows(by_entity: Mapping[str, Sequence[AliasItem]]) -> list[dict[str, str | None]]:
    """The :rows of ADD_ALIASES_SQL for aliases by entity key (an alias of itself is skipped)."""
    rows = {
        i.stored_key: {
            "alias_key": i.stored_key,
            "entity_key": entity_key,
            "alias_name": i.alias_name,
            "source": i.source,
            "document_id": i.document_id,
        }
        for entity_key, items in sorted(by_entity.items())
        for i in items
        if i.alias_key != entity_key
    }
    return list(rows.values())


async def add_aliases_of(
    conn: AsyncConnection, project_id: str, by_entity: Mapping[str, Sequence[AliasItem]], *, overwrite: bool = False
) -> int:
    """`add_aliases` for several entities in one statement (a merge records one per new entity)."""
    rows = alias_rows(by_entity)
    if not rows:
        return 0
    result = await conn.execute(_ADD_ALIASES, {"project_id": project_id, "rows": rows, "overwrite": overwrite})
    return result.rowcount or 0


async def has_aliases(conn: AsyncConnection, project_id: str) -> bool:
    return bool(await conn.scalar(select(exists().where(_A.project_id == project_id))))


async def alias_targets(conn: AsyncConnection, project_id: str, stored_keys: Iterable[str]) -> dict[str, str]:
    """Stored alias key (scoped or not) → entity key, for those of `stored_keys` naming an existing entity (a
    document's own aliases are read with the rest of its names' state: resolution_reads.py)."""
    wanted = sorted(set(stored_keys))
    if not wanted:
        return {}
    rows = await conn.execute(
        select(_A.alias_key, _A.entity_key).where(
            _A.project_id == project_id,
            _A.alias_key == any_of(wanted),
            exists().where(entities.c.project_id == project_id, entities.c.key == _A.entity_key),
        )
    )
    return dict(rows.all())


async def aliases_of(conn: AsyncConnection, project_id: str, entity_keys: Iterable[str]) -> dict[str, list[AliasRow]]:
    """entity key → its aliases (project-wide and document-scoped), oldest first. The internal match-key
    index rows of resolution (app/domain/resolution.py::index_key) are not aliases a user sees."""
    wanted = sorted(set(entity_keys))
    if not wanted:
        return {}
    rows = (
        (
            await conn.execute(
                select(_A.alias_key, _A.entity_key, _A.alias_name, _A.source, _A.document_id, _A.created_at)
                .where(
                    _A.project_id == project_id, _A.entity_key == any_of(wanted), ~_A.alias_key.startswith(MATCH_INDEX)
                )
                .order_by(_A.entity_key, _A.created_at, _A.alias_key)
            )
        )
        .mappings()
        .all()
    )
    out: dict[str, list[AliasRow]] = {}
    for row in rows:
        out.setdefault(row["entity_key"], []).append(AliasRow.from_row(row))
    return out


async def get_alias(conn: AsyncConnection, project_id: str, alias_key: str) -> AliasRow | None:
    row = (
        (await conn.execute(select(entity_aliases).where(_A.project_id == project_id, _A.alias_key == alias_key)))
        .mappings()
        .first()
    )
    return AliasRow.from_row(row) if row else None


async def detach(conn: AsyncConnection, project_id: str, alias_key: str) -> bool:
    """Forget one alias (the stored key, scoped or not); True if it existed."""
    result = await conn.execute(delete(entity_aliases).where(_A.project_id == project_id, _A.alias_key == alias_key))
    return bool(result.rowcount)


async def delete_aliases_of(conn: AsyncConnection, project_id: str, entity_keys: Iterable[str]) -> int:
    """Forget every alias of entities being deleted (the caller holds their key locks)."""
    keys = sorted(set(entity_keys))
    if not keys:
        return 0
    result = await conn.execute(
        delete(entity_aliases).where(_A.project_id == project_id, _A.entity_key == any_of(keys))
    )
    return result.rowcount or 0


async def repoint(conn: AsyncConnection, project_id: str, from_keys: Iterable[str], to_key: str) -> int:
    """Aliases of entities merged into (or renamed to) `to_key` follow it; an alias that would name
    `to_key` itself is dropped. Returns the aliases moved."""
    sources = sorted(set(from_keys) - {to_key})
    if not sources:
        return 0
    await conn.execute(delete(entity_aliases).where(_A.project_id == project_id, _A.alias_key == to_key))
    result = await conn.execute(
        update(entity_aliases)
        .where(_A.project_id == project_id, _A.entity_key == any_of(sources))
        .values(entity_key=to_key)
    )
    return result.rowcount or 0


async def keys_by_prefix(conn: AsyncConnection, project_id: str, pattern: str, first: str) -> list[tuple[str, str]]:
    """(key, entity_type) of the project's entities whose key starts with `first` and matches the POSIX
    regular expression `pattern` (acronym initials); the prefix keeps it to a range of the primary key."""
    e = entities.c
    upper = prefix_end(first)
    rows = await conn.execute(
        select(e.key, e.entity_type)
        .where(e.project_id == project_id, e.key >= first, e.key < upper, e.key.regexp_match(pattern))
        .order_by(e.key)  # the same 20 whatever the rows' places on disk: a decision must not change with them
        .limit(20)
    )
    return [(k, t) for k, t in rows.all()]


async def document_of_chunks(conn: AsyncConnection, project_id: str, chunk_ids: Iterable[str]) -> dict[str, str]:
    ids = sorted(set(chunk_ids))
    if not ids:
        return {}
    rows = await conn.execute(
        select(chunks.c.id, chunks.c.document_id).where(chunks.c.project_id == project_id, chunks.c.id == any_of(ids))
    )
    return dict(rows.all())


# ----- suggestions and rejections -----


async def add_suggestions(conn: AsyncConnection, project_id: str, items: Sequence[SuggestionItem]) -> int:
    """Record suggested pairs (the best score kept); pairs a user rejected, or of one key, are skipped."""
    by_pair: dict[Pair, SuggestionItem] = {}
    for item in (i.sorted() for i in items if i.key_a != i.key_b):
        if (old := by_pair.get((item.key_a, item.key_b))) is None or item.score > old.score:
            by_pair[(item.key_a, item.key_b)] = item
    if not by_pair:
        return 0
    rejected = await rejected_pairs(conn, project_id, list(by_pair))
    rows = [
        {"project_id": project_id, "key_a": i.key_a, "key_b": i.key_b, "score": i.score, "evidence": i.evidence}
        for p, i in sorted(by_pair.items())
        if p not in rejected
    ]
    if not rows:
        return 0
    stmt = pg_insert(entity_suggestions).values(rows)
    s = entity_suggestions.c
    stmt = stmt.on_conflict_do_update(
        index_elements=[s.project_id, s.key_a, s.key_b],
        set_={"score": stmt.excluded.score, "evidence": stmt.excluded.evidence},
        where=s.score < stmt.excluded.score,
    )
    await conn.execute(stmt)
    return len(rows)


async def list_suggestions(
    conn: AsyncConnection, project_id: str, *, limit: int = 100, offset: int = 0
) -> list[SuggestionRow]:
    """Suggested pairs whose two entities still exist, best score first."""
    s = entity_suggestions.c
    ea, eb = entities.alias("ea"), entities.alias("eb")
    rows = (
        (
            await conn.execute(
                select(s.key_a, s.key_b, s.score, s.evidence, s.created_at)
                .join(ea, and_(ea.c.project_id == s.project_id, ea.c.key == s.key_a))
                .join(eb, and_(eb.c.project_id == s.project_id, eb.c.key == s.key_b))
                .where(s.project_id == project_id)
                .order_by(s.score.desc(), s.key_a, s.key_b)
                .limit(limit)
                .offset(offset)
            )
        )
        .mappings()
        .all()
    )
    return [SuggestionRow.from_row(r) for r in rows]


async def suggestion_evidence(conn: AsyncConnection, project_id: str, key_a: str, key_b: str) -> str | None:
    """The evidence stored with the suggested pair, None when the pair was not suggested by resolution."""
    a, b = sorted_pair(key_a, key_b)
    s = entity_suggestions.c
    found = await conn.execute(select(s.evidence).where(s.project_id == project_id, s.key_a == a, s.key_b == b))
    return found.scalar_one_or_none()


async def remove_suggestions(conn: AsyncConnection, project_id: str, pairs: Iterable[Pair]) -> int:
    wanted = sorted({sorted_pair(*p) for p in pairs})
    if not wanted:
        return 0
    s = entity_suggestions.c
    listed = pair_rows(wanted)
    result = await conn.execute(
        delete(entity_suggestions).where(s.project_id == project_id, s.key_a == listed.c.s, s.key_b == listed.c.t)
    )
    return result.rowcount or 0


async def reject(conn: AsyncConnection, project_id: str, key_a: str, key_b: str) -> None:
    """Remember that the two entities are distinct: the pair is never suggested again."""
    a, b = sorted_pair(key_a, key_b)
    if a == b:
        return
    await conn.execute(
        pg_insert(entity_rejections).values(project_id=project_id, key_a=a, key_b=b).on_conflict_do_nothing()
    )
    await remove_suggestions(conn, project_id, [(a, b)])


async def forget_rejection(conn: AsyncConnection, project_id: str, key_a: str, key_b: str) -> None:
    """A pair a user joined by hand (a manual alias) is no longer one they said is distinct."""
    a, b = sorted_pair(key_a, key_b)
    r = entity_rejections.c
    await conn.execute(delete(entity_rejections).where(r.project_id == project_id, r.key_a == a, r.key_b == b))


async def rejected_pairs(conn: AsyncConnection, project_id: str, pairs: Iterable[Pair]) -> set[Pair]:
    wanted = sorted({sorted_pair(*p) for p in pairs})
    if not wanted:
        return set()
    r = entity_rejections.c
    listed = pair_rows(wanted)
    rows = await conn.execute(
        select(r.key_a, r.key_b)
        .join(listed, and_(r.key_a == listed.c.s, r.key_b == listed.c.t))
        .where(r.project_id == project_id)
    )
    return {(a, b) for a, b in rows.all()}


async def entity_types(conn: AsyncConnection, project_id: str, keys: Iterable[str]) -> dict[str, str]:
    """key → entity type of the given keys that are entities."""
    wanted = sorted(set(keys))
    if not wanted:
        return {}
    rows = await conn.execute(
        select(entities.c.key, entities.c.entity_type).where(
            entities.c.project_id == project_id, entities.c.key == any_of(wanted)
        )
    )
    return dict(rows.all())


async def document_texts(conn: AsyncConnection, project_id: str, document_id: str) -> list[str]:
    """The document's chunk texts, in order (acronym definitions are read from them)."""
    rows = await conn.execute(
        select(chunks.c.content)
        .where(chunks.c.project_id == project_id, chunks.c.document_id == document_id)
        .order_by(chunks.c.order_index)
    )
    return list(rows.scalars())


_SCOPE_DEFINITIONS = text("""
WITH gone AS (
    DELETE FROM entity_aliases a
     WHERE a.project_id = :project_id AND a.alias_key = ANY(CAST(:keys AS text[])) AND a.source = 'acronym'
       AND a.document_id IS NOT NULL
    RETURNING a.alias_key, a.entity_key, a.alias_name, a.document_id
)
INSERT INTO entity_aliases (project_id, alias_key, entity_key, alias_name, source, document_id)
SELECT :project_id, g.alias_key || chr(31) || g.document_id, g.entity_key, g.alias_name, 'acronym', g.document_id
  FROM gone g
ON CONFLICT (project_id, alias_key) DO NOTHING
""")


async def scope_definitions(conn: AsyncConnection, project_id: str, keys: Sequence[str]) -> None:
    """The project-wide definitions of the acronyms `keys` become aliases scoped to the document that wrote
    each: the acronym keeps its meaning there and has none where it stands alone."""
    if keys:
        await conn.execute(_SCOPE_DEFINITIONS, {"project_id": project_id, "keys": sorted(keys)})
