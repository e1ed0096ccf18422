"""SQL for reviewing the ledger of automatic merges (migrations 0013, 0014) and for undoing one: the entries
with their entity's and document's names, their outcome, and the provenance rows an unmerge moves."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import BigInteger, and_, any_, cast, delete, func, insert, or_, select, update
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables import documents, entities, entity_aliases, entity_merge_ledger, entity_sources, relation_sources
from app.domain.aliases import SCOPE_SEPARATOR
from app.repositories.graph import any_of

Outcome = Literal["confirmed", "undone", "rejected"]
_L = entity_merge_ledger.c


@dataclass(frozen=True)
class LedgerEntry:
    id: int
    entity_key: str
    entity_name: str | None  # None when the entity is gone
    merged_key: str
    merged_name: str
    rule: str
    evidence: str
    document_id: str | None
    file_path: str | None
    retroactive: bool
    created_at: datetime
    outcome: Outcome | None
    decided_at: datetime | None


def _select() -> Any:
    return (
        select(
            _L.id,
            _L.entity_key,
            entities.c.name.label("entity_name"),
            _L.merged_key,
            _L.merged_name,
            _L.rule,
            _L.evidence,
            _L.document_id,
            documents.c.file_path,
            _L.retroactive,
            _L.created_at,
            _L.outcome,
            _L.decided_at,
        )
        .select_from(entity_merge_ledger)
        .outerjoin(entities, and_(entities.c.project_id == _L.project_id, entities.c.key == _L.entity_key))
        .outerjoin(documents, and_(documents.c.project_id == _L.project_id, documents.c.id == _L.document_id))
    )


def _filters(
    project_id: str, keys: Sequence[str] | None, document_id: str | None, rule: str | None, active: bool
) -> list[Any]:
    where: list[Any] = [_L.project_id == project_id]
    if keys is not None:
        where.append(or_(_L.entity_key == any_of(keys), _L.merged_key == any_of(keys)))
    if document_id is not None:
        where.append(_L.document_id == document_id)
    if rule is not None:
        where.append(_L.rule == rule)
    if active:
        where.append(or_(_L.outcome.is_(None), _L.outcome == "confirmed"))
    return where


async def list_entries(
    conn: AsyncConnection,
    project_id: str,
    *,
    keys: Sequence[str] | None = None,
    document_id: str | None = None,
    rule: str | None = None,
    active: bool = False,
    limit: int = 100,
    offset: int = 0,
) -> tuple[list[LedgerEntry], int]:
    """Entries newest first (into or of the entities `keys` when given; `active`: not undone) and their total."""
    where = _filters(project_id, keys, document_id, rule, active)
    rows = await conn.execute(_select().where(*where).order_by(_L.id.desc()).limit(limit).offset(offset))
    total = await conn.scalar(select(func.count()).select_from(entity_merge_ledger).where(*where))
    return [LedgerEntry(**r) for r in rows.mappings()], int(total or 0)


async def standing_into(conn: AsyncConnection, project_id: str, entity_key: str) -> list[LedgerEntry]:
    """The merges into `entity_key` that still stand (unreviewed or confirmed), oldest first."""
    rows = await conn.execute(
        _select()
        .where(_L.entity_key == entity_key, *_filters(project_id, None, None, None, active=True))
        .order_by(_L.id)
    )
    return [LedgerEntry(**r) for r in rows.mappings()]


async def get_entry(conn: AsyncConnection, project_id: str, entry_id: int) -> LedgerEntry | None:
    row = (await conn.execute(_select().where(_L.project_id == project_id, _L.id == entry_id))).mappings().first()
    return LedgerEntry(**row) if row else None


async def set_outcome(conn: AsyncConnection, project_id: str, entry_ids: Sequence[int], outcome: Outcome) -> None:
    if entry_ids:
        await conn.execute(
            update(entity_merge_ledger)
            .where(_L.project_id == project_id, _L.id == any_(cast(list(entry_ids), ARRAY(BigInteger))))
            .values(outcome=outcome, decided_at=func.now())
        )


async def add_confirmed(
    conn: AsyncConnection, project_id: str, entity_key: str, merged_key: str, merged_name: str, rule: str, evidence: str
) -> int:
    """An entry for a merge a user made from a review (already decided: confirmed); its id."""
    added = await conn.execute(
        insert(entity_merge_ledger)
        .values(
            project_id=project_id,
            entity_key=entity_key,
            merged_key=merged_key,
            merged_name=merged_name,
            rule=rule,
            evidence=evidence,
            outcome="confirmed",
            decided_at=func.now(),
        )
        .returning(_L.id)
    )
    return int(added.scalar_one())


async def detach_aliases(
    conn: AsyncConnection, project_id: str, entity_key: str, alias_keys: Sequence[str], *, scoped: bool = True
) -> int:
    """Forget the aliases `alias_keys` of `entity_key`, and unless `scoped` is false those scoped to a document."""
    a = entity_aliases.c
    wanted = a.alias_key == any_of(alias_keys)
    if scoped:
        wanted = or_(wanted, *(a.alias_key.startswith(k + SCOPE_SEPARATOR, autoescape=True) for k in alias_keys))
    result = await conn.execute(
        delete(entity_aliases).where(a.project_id == project_id, a.entity_key == entity_key, wanted)
    )
    return result.rowcount or 0


async def drop_entity_sources(conn: AsyncConnection, project_id: str, key: str, chunk_ids: Sequence[str]) -> None:
    s = entity_sources.c
    if chunk_ids:
        await conn.execute(
            delete(entity_sources).where(
                s.project_id == project_id, s.entity_key == key, s.chunk_id == any_of(chunk_ids)
            )
        )


async def drop_relation_sources(
    conn: AsyncConnection, project_id: str, pair: tuple[str, str], chunk_ids: Sequence[str]
) -> None:
    s = relation_sources.c
    if chunk_ids:
        await conn.execute(
            delete(relation_sources).where(
                s.project_id == project_id,
                s.src_key == pair[0],
                s.tgt_key == pair[1],
                s.chunk_id == any_of(chunk_ids),
            )
        )
