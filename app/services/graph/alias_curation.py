"""Hand curation of aliases: add another name to an entity, or detach one.

An alias is a name whose key leads to the entity: lookups and curation by that name reach it, and the
ingestion pipeline merges later mentions of it into the entity. Writes hold the key locks of the entity
and of the alias (the scheme every alias writer follows, see repositories/aliases.py).

Detaching also remembers the pair (alias, entity) as rejected, so neither the resolution at ingest time nor
the duplicate review joins them again: later documents using the name make (or keep) a node of their own."""

from __future__ import annotations

from app.core.errors import Conflict, NotFound
from app.domain.aliases import AliasItem
from app.repositories import aliases as alias_repo
from app.repositories import graph as graph_repo
from app.repositories import graph_curation as repo
from app.schemas.graph import AliasAdd, AliasDetach, EntityOut
from app.services.graph.common import (
    CurationBase,
    display_name,
    entity_with_aliases,
    not_found,
    refuse_alias_of_other,
)
from app.services.projects import require_project


class AliasCurationService(CurationBase):
    async def add_alias(self, name: str, body: AliasAdd) -> EntityOut:
        """201 with the entity; 409 when the alias is an entity's name or another entity's alias."""
        pid = body.project_id
        alias_name = display_name(body.alias, self.max_name)
        alias_key = self._key(alias_name)
        key = await self._entity_key(pid, name)
        async with self._gate(pid, [key, alias_key]), self.db.transaction() as conn:
            await graph_repo.lock_keys(conn, pid, [key, alias_key])
            row = await repo.get_entity(conn, pid, key)
            if row is None:
                raise not_found(name)
            named = await repo.get_entity(conn, pid, alias_key)
            if named is not None:
                raise Conflict(f"'{alias_name}' is the name of entity '{named.name}'; to combine them use "
                               "POST /entities/merge", code="entity_exists")
            await refuse_alias_of_other(conn, pid, alias_key, alias_name, key)
            await alias_repo.add_aliases(conn, pid, key, [AliasItem(alias_key, alias_name, "manual")],
                                         overwrite=True)
            await alias_repo.forget_rejection(conn, pid, alias_key, key)
            return await entity_with_aliases(conn, pid, row)

    async def detach_alias(self, name: str, body: AliasDetach) -> EntityOut:
        """Forget the alias (project-wide and per-document forms); 404 when the entity has no such alias."""
        pid = body.project_id
        alias_key = self._key(body.alias)
        key = await self._entity_key(pid, name)
        async with self._gate(pid, [key, alias_key]), self.db.transaction() as conn:
            await graph_repo.lock_keys(conn, pid, [key, alias_key])
            row = await repo.get_entity(conn, pid, key)
            if row is None:
                raise not_found(name)
            stored = [a for a in (await alias_repo.aliases_of(conn, pid, [key])).get(key, []) if a.key == alias_key]
            if not stored:
                raise NotFound(f"'{body.alias}' is not an alias of entity '{row.name}'", code="alias_not_found")
            for alias in stored:
                await alias_repo.detach(conn, pid, alias.alias_key)
            await alias_repo.reject(conn, pid, alias_key, key)
            return await entity_with_aliases(conn, pid, row)

    async def _entity_key(self, pid: str, name: str) -> str:
        async with self.db.connect() as conn:
            await require_project(conn, pid)
            return await self._resolve(conn, pid, name)
