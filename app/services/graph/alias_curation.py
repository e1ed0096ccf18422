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
from app.repositories import graph_curation as repo
from app.schemas.graph import AliasAdd, AliasDetach, EntityOut
from app.services.graph.gate import CurationBase, locked_keys
from app.services.graph.inputs import display_name
from app.services.graph.lookups import not_found, refuse_alias_of_other
from app.services.graph.outputs import entity_with_aliases
from app.services.projects import require_project


class AliasCurationService(CurationBase):
    async def add_alias(self, name: str, body: AliasAdd) -> EntityOut:
        """201 with the entity; 409 when the alias is an entity's name or another entity's alias."""
        project_id = body.project_id
        alias_name = display_name(body.alias, self.max_name)
        alias_key = self._key(alias_name)
        key = await self._entity_key(project_id, name)
        async with locked_keys(self.db, project_id, [key, alias_key]) as conn:
            row = await repo.get_entity(conn, project_id, key)
            if row is None:
                raise not_found(name)
            named = await repo.get_entity(conn, project_id, alias_key)
            if named is not None:
                raise Conflict(
                    f"'{alias_name}' is the name of entity '{named.name}'; to combine them use POST /entities/merge",
                    code="entity_exists",
                )
            await refuse_alias_of_other(conn, project_id, alias_key, alias_name, key)
            await alias_repo.add_aliases(
                conn, project_id, key, [AliasItem(alias_key, alias_name, "manual")], overwrite=True
            )
            await alias_repo.forget_rejection(conn, project_id, alias_key, key)
            return await entity_with_aliases(conn, project_id, row)

    async def detach_alias(self, name: str, body: AliasDetach) -> EntityOut:
        """Forget the alias (project-wide and per-document forms); 404 when the entity has no such alias."""
        project_id = body.project_id
        alias_key = self._key(body.alias)
        key = await self._entity_key(project_id, name)
        async with locked_keys(self.db, project_id, [key, alias_key]) as conn:
            row = await repo.get_entity(conn, project_id, key)
            if row is None:
                raise not_found(name)
            aliases = (await alias_repo.aliases_of(conn, project_id, [key])).get(key, [])
            stored = [a for a in aliases if a.key == alias_key]
            if not stored:
                raise NotFound(f"'{body.alias}' is not an alias of entity '{row.name}'", code="alias_not_found")
            for alias in stored:
                await alias_repo.detach(conn, project_id, alias.alias_key)
            await alias_repo.reject(conn, project_id, alias_key, key)
            return await entity_with_aliases(conn, project_id, row)

    async def _entity_key(self, project_id: str, name: str) -> str:
        async with self.db.connect() as conn:
            await require_project(conn, project_id)
            return await self._resolve(conn, project_id, name)
