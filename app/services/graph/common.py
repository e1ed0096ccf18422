"""Helpers shared by the curation services (entities, relations, merge, graph view, deletion): input
normalisation with clear 4xx errors, the project check, row → response mapping, and the per-entity gate."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncConnection

from app.container import Container
from app.core.errors import Conflict, InvalidInput, NotFound
from app.db.engine import Database
from app.domain.aliases import AliasRow
from app.domain.names import lookup_key, normalize_description, normalize_name, sanitize, sorted_pair
from app.domain.rows import EntityRow, RelationRow
from app.repositories import aliases as alias_repo
from app.repositories import graph_curation as curation_repo
from app.schemas.graph import EntityOut, Keywords, RelationOut

_KEYWORD_SPLIT = re.compile(r"[,\uff0c]")


def display_name(raw: str, max_length: int) -> str:
    name = normalize_name(raw, max_length)
    if not name:
        raise InvalidInput(f"'{raw}' is not a usable entity name", code="invalid_entity_name")
    return name


def clean_description(raw: str) -> str:
    text = normalize_description(raw)
    if not text:
        raise InvalidInput("description must not be empty", code="invalid_description")
    return text


def keyword_list(value: Keywords | str) -> list[str]:
    values = [value] if isinstance(value, str) else value
    parts = [p for v in values for p in _KEYWORD_SPLIT.split(sanitize(v))]
    return [p.strip() for p in parts if p.strip()]


def join_keywords(*values: Keywords | str) -> str:
    """Sorted, de-duplicated union joined by "," (the ingestion format)."""
    return ",".join(sorted({k for v in values for k in keyword_list(v)}))


def entity_out(row: EntityRow, aliases: Iterable[AliasRow] = ()) -> EntityOut:
    return EntityOut(name=row.name, entity_type=row.entity_type, aliases=alias_names(aliases),
                     description=row.description,
                     degree=row.degree, file_paths=list(row.file_paths or []), curated=row.curated,
                     created_at=row.created_at, updated_at=row.updated_at)


def alias_names(aliases: Iterable[AliasRow]) -> list[str]:
    """Each alias name once (one may be stored project-wide and for single documents), oldest first."""
    return list(dict.fromkeys(a.alias_name for a in aliases))


async def entities_out(conn: AsyncConnection, project_id: str, rows: Sequence[EntityRow]) -> list[EntityOut]:
    aliases = await alias_repo.aliases_of(conn, project_id, [r.key for r in rows])
    return [entity_out(r, aliases.get(r.key, ())) for r in rows]


async def entity_with_aliases(conn: AsyncConnection, project_id: str, row: EntityRow | None) -> EntityOut:
    assert row is not None  # read under the lock of the key the caller just wrote
    return (await entities_out(conn, project_id, [row]))[0]


async def refuse_alias_of_other(conn: AsyncConnection, project_id: str, key: str, name: str,
                                owner: str | None) -> None:
    """409 when `key` is a project-wide alias of an existing entity other than `owner`: giving the name to
    another entity would leave it naming two."""
    named = (await alias_repo.alias_targets(conn, project_id, [key])).get(key)
    if named is not None and named != owner:
        other = await curation_repo.get_entity(conn, project_id, named)
        raise Conflict(f"'{name}' is an alias of entity '{other.name if other else named}'; detach it first "
                       "or merge the entities", code="alias_exists")


async def resolve_key(conn: AsyncConnection, project_id: str, key: str) -> str:
    """The entity a name's key refers to: the entity of that key if it exists, else the entity a
    project-wide alias of that key names; the key itself when neither exists (callers answer 404)."""
    if await curation_repo.get_entity(conn, project_id, key) is not None:
        return key
    return (await alias_repo.alias_targets(conn, project_id, [key])).get(key, key)


def relation_out(row: RelationRow) -> RelationOut:
    return RelationOut(source=row.src_name, target=row.tgt_name, keywords=row.keywords,
                       description=row.description, weight=row.weight,
                       file_paths=list(row.file_paths or []), curated=row.curated,
                       created_at=row.created_at, updated_at=row.updated_at)


def ordered_union(*lists: list[str] | None) -> list[str]:
    seen: dict[str, None] = {}
    for items in lists:
        for item in items or []:
            seen.setdefault(item, None)
    return list(seen)


def not_found(name: str) -> NotFound:
    return NotFound(f"Entity '{name}' not found", code="entity_not_found")


def name_key(name: str, max_length: int) -> str:
    """The entity key a user-supplied name refers to (the extraction normalisation, then case folding)."""
    key = lookup_key(sanitize(name), max_length)
    if not key:
        raise InvalidInput(f"'{name}' is not a usable entity name", code="invalid_entity_name")
    return key


def pair_key(source: str, target: str, max_length: int) -> tuple[str, str]:
    a, b = name_key(source, max_length), name_key(target, max_length)
    if a == b:
        raise InvalidInput("A relation needs two different entities", code="self_relation")
    return sorted_pair(a, b)


def relation_missing(source: str, target: str) -> NotFound:
    return NotFound(f"No relation between '{source}' and '{target}'", code="relation_not_found")


@dataclass
class _Gate:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


_GATES: dict[tuple[int, str, str], _Gate] = {}


@asynccontextmanager
async def entity_gate(db: Database, project_id: str, keys: Iterable[str]) -> AsyncIterator[None]:
    """One curation write (edit, merge, document deletion) at a time per entity key in this process.

    Requests on the same entity queue here without a pooled connection, instead of each holding one
    while it waits for the database advisory lock: a queue of them no longer fills the pool that the
    lock holder, `/health` and ingestion need. Keys are taken in sorted order and always before any
    transaction begins, so gates and advisory locks never wait on each other in a cycle.
    """
    idents = [(id(db), project_id, k) for k in sorted(set(keys))]
    gates = [_GATES.setdefault(ident, _Gate()) for ident in idents]
    for gate in gates:
        gate.users += 1
    held: list[_Gate] = []
    try:
        for gate in gates:
            await gate.lock.acquire()
            held.append(gate)
        yield
    finally:
        for gate in held:
            gate.lock.release()
        for ident, gate in zip(idents, gates, strict=True):
            gate.users -= 1
            if not gate.users:
                del _GATES[ident]


class CurationBase:
    """What every curation service holds: the container, its database and the name-length rule."""

    def __init__(self, c: Container) -> None:
        self.c = c
        self.db = c.db
        self.max_name = c.settings.entity_name_max_length

    def _key(self, name: str) -> str:
        return name_key(name, self.max_name)

    async def _resolve(self, conn: AsyncConnection, project_id: str, name: str) -> str:
        """The key of the entity `name` names, directly or as an alias."""
        return await resolve_key(conn, project_id, self._key(name))

    def _gate(self, project_id: str, keys: Iterable[str]) -> AbstractAsyncContextManager[None]:
        return entity_gate(self.db, project_id, keys)
