"""Lookups shared by the curation services: an entity key through its aliases, and the not-found errors."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from app.core.errors import Conflict, NotFound
from app.repositories import aliases as alias_repo
from app.repositories import graph_curation as curation_repo


async def refuse_alias_of_other(conn: AsyncConnection, project_id: str, key: str, name: str, owner: str | None) -> None:
    """409 when `key` is a project-wide alias of an existing entity other than `owner`: giving the name to
    another entity would leave it naming two."""
    named = (await alias_repo.alias_targets(conn, project_id, [key])).get(key)
    if named is not None and named != owner:
        other = await curation_repo.get_entity(conn, project_id, named)
        raise Conflict(
            f"'{name}' is an alias of entity '{other.name if other else named}'; detach it first or merge the entities",
            code="alias_exists",
        )


async def resolve_key(conn: AsyncConnection, project_id: str, key: str) -> str:
    """The entity a name's key refers to: the entity of that key if it exists, else the entity a
    project-wide alias of that key names; the key itself when neither exists (callers answer 404)."""
    if await curation_repo.get_entity(conn, project_id, key) is not None:
        return key
    return (await alias_repo.alias_targets(conn, project_id, [key])).get(key, key)


def not_found(name: str) -> NotFound:
    return NotFound(f"Entity '{name}' not found", code="entity_not_found")


def relation_missing(source: str, target: str) -> NotFound:
    return NotFound(f"No relation between '{source}' and '{target}'", code="relation_not_found")
