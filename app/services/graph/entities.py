"""Hand curation of entities: list/search, read with provenance and relations, create, edit, rename, delete.

Every write is one short transaction holding the pipeline's advisory locks on the keys it touches; it stores
the vectors of whatever text it changed, made beforehand with no transaction open (services/graph/vectors.py),
so the stored vectors always match and no lock waits on the embedder. Writes on the same entity first queue
at the in-process gate (gate.entity_gate), holding no connection; the locks are taken as gate.locked_keys says."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from app.core.errors import Conflict
from app.domain.aliases import AliasItem
from app.domain.names import entity_key, normalize_type, sanitize, sorted_pair
from app.domain.rows import ENTITY_FIELDS, EntityRow
from app.repositories import aliases as alias_repo
from app.repositories import graph_curation as repo
from app.schemas.graph import (
    EntityCreate,
    EntityDeleted,
    EntityDetail,
    EntityList,
    EntityOut,
    EntityUpdate,
    SourceChunk,
)
from app.services.graph.gate import CurationBase
from app.services.graph.inputs import clean_description, display_name
from app.services.graph.lookups import not_found, refuse_alias_of_other
from app.services.graph.outputs import entities_out, entity_with_aliases, relation_out
from app.services.graph.vectors import PreparedVectors, write_with_vectors
from app.services.projects import require_project

MAX_DETAIL_SOURCES = 1000


class CurationService(CurationBase):
    # ----- entities: reads -----

    async def list_entities(
        self, project_id: str, q: str | None, entity_type: str | None, limit: int, offset: int
    ) -> EntityList:
        needle = entity_key(sanitize(q)) if q and sanitize(q) else None
        type_filter = normalize_type(entity_type) if entity_type and entity_type.strip() else None
        async with self.db.read() as conn:
            await require_project(conn, project_id)
            rows, total = await repo.list_entities(
                conn, project_id, q=needle, entity_type=type_filter, limit=limit, offset=offset
            )
            out = await entities_out(conn, project_id, rows)
        return EntityList(entities=out, total=total, limit=limit, offset=offset)

    async def get_entity(
        self, project_id: str, name: str, relation_limit: int, *, by_alias: bool = True
    ) -> EntityDetail:
        """By its name or (unless not `by_alias`: a node of that name only) any of its aliases."""
        async with self.db.read() as conn:
            await require_project(conn, project_id)
            key = await self._resolve(conn, project_id, name) if by_alias else self._key(name)
            row = await repo.get_entity(conn, project_id, key)
            if row is None:
                raise not_found(name)
            out = await entity_with_aliases(conn, project_id, row)
            sources = await repo.entity_source_chunks(conn, project_id, key, MAX_DETAIL_SOURCES)
            rels = await repo.relations_touching(conn, project_id, [key], limit=relation_limit)
        return EntityDetail(
            **out.model_dump(),
            source_ids=list(row.source_ids or []),
            source_chunks=[SourceChunk(**s) for s in sources],
            relations=[relation_out(r) for r in rels],
            relations_total=row.degree,
        )

    # ----- entities: writes -----

    async def create_entity(self, body: EntityCreate) -> EntityOut:
        project_id = body.project_id
        name = display_name(body.name, self.max_name)
        key = entity_key(name)
        description = clean_description(body.description)
        values = {
            "key": key,
            "name": name,
            "description": description,
            "entity_type": normalize_type(body.entity_type or "unknown"),
            "hand_fields": list(ENTITY_FIELDS),  # made by hand: nothing to rebuild it from
        }
        vectors = PreparedVectors(self.c.embedder)

        async def check_free(conn: AsyncConnection) -> None:
            existing = await repo.get_entity(conn, project_id, key)
            if existing is not None:
                raise Conflict(f"Entity '{existing.name}' already exists", code="entity_exists")
            await refuse_alias_of_other(conn, project_id, key, name, None)

        async def write(conn: AsyncConnection, embed_here: bool) -> EntityOut:
            await check_free(conn)
            await repo.insert_entity(conn, project_id, values)
            await vectors.write(conn, project_id, entity_keys=[key], embed_here=embed_here)
            return await entity_with_aliases(conn, project_id, await repo.get_entity(conn, project_id, key))

        async with self._gate(project_id, [key]):
            async with self.db.connect() as conn:
                await require_project(conn, project_id)
                await check_free(conn)
            vectors.want_entity(name, description)
            return await write_with_vectors(vectors, lambda: self._locked(project_id, [key], gate=False), write)

    async def update_entity(self, name: str, body: EntityUpdate) -> EntityOut:
        """Plan with no transaction open (read, predict the new texts, embed them), then lock and write in a
        short transaction that stores the prepared vectors, or tries again when a concurrent change made
        them outdated (see services/graph/vectors.py)."""
        project_id = body.project_id
        async with self.db.connect() as conn:
            await require_project(conn, project_id)
            key = await self._resolve(conn, project_id, name)
        values: dict = {}
        if body.description is not None:
            values["description"] = clean_description(body.description)
        if body.entity_type is not None:
            values["entity_type"] = normalize_type(body.entity_type)
        edited = {f for f in ENTITY_FIELDS if f in values}  # kept by deletion rebuilds (migration 0024)
        new_name = display_name(body.new_name, self.max_name) if body.new_name is not None else None
        new_key = entity_key(new_name) if new_name else key
        vectors = PreparedVectors(self.c.embedder)

        async def write(conn: AsyncConnection, embed_here: bool) -> EntityOut:
            row = await repo.get_entity(conn, project_id, key)
            if row is None:
                raise not_found(name)
            changes = dict(values, name=new_name) if new_name is not None else dict(values)
            if edited:
                changes["hand_fields"] = sorted(set(row.hand_fields) | edited)
            if new_key != key:
                await self._rename(conn, project_id, row, new_key, changes)
            else:
                await repo.update_entity(conn, project_id, key, changes)
            await vectors.write(conn, project_id, entity_keys=[new_key], touching=[new_key], embed_here=embed_here)
            return await entity_with_aliases(conn, project_id, await repo.get_entity(conn, project_id, new_key))

        async with self._gate(project_id, {key, new_key}):
            await self._predict_update(project_id, name, key, new_name, new_key, values, vectors)
            return await write_with_vectors(
                vectors, lambda: self._locked(project_id, {key, new_key}, gate=False), write
            )

    async def _predict_update(
        self,
        project_id: str,
        name: str,
        key: str,
        new_name: str | None,
        new_key: str,
        values: dict,
        vectors: PreparedVectors,
    ) -> None:
        """Read without locks and note the texts the update will embed; fail early on what would fail."""
        async with self.db.connect() as conn:
            await require_project(conn, project_id)
            row = await repo.get_entity(conn, project_id, key)
            if row is None:
                raise not_found(name)
            if new_key != key:
                await self._check_rename_target(conn, project_id, row, new_key)
            renamed = new_name is not None and new_name != row.name
            rels = await repo.relations_touching(conn, project_id, [key]) if renamed else []
        final_name = new_name or row.name
        vectors.want_entity(final_name, values.get("description", row.description))
        for rel in rels:
            vectors.want_relation(
                final_name if rel.src_key == key else rel.src_name,
                final_name if rel.tgt_key == key else rel.tgt_name,
                rel.keywords,
                rel.description,
            )

    @staticmethod
    async def _check_rename_target(conn: AsyncConnection, project_id: str, row: EntityRow, new_key: str) -> None:
        clash = await repo.get_entity(conn, project_id, new_key)
        if clash is not None:
            raise Conflict(
                f"Entity '{clash.name}' already exists; to combine '{row.name}' into it use POST /entities/merge",
                code="entity_exists",
            )
        await refuse_alias_of_other(conn, project_id, new_key, new_key, row.key)

    async def _rename(self, conn: AsyncConnection, project_id: str, row: EntityRow, new_key: str, values: dict) -> None:
        """Create the new entity, move every relation (re-sorted pairs) and all provenance onto it, then
        drop the old row. Relation provenance follows the re-keyed relations through ON UPDATE CASCADE.
        The old name stays an alias of the entity: later documents, lookups and rebuilds of cached
        records that use it reach the renamed entity."""
        await self._check_rename_target(conn, project_id, row, new_key)
        old_key = row.key
        await repo.insert_entity(
            conn,
            project_id,
            {
                "key": new_key,
                "name": values["name"],
                "entity_type": values.get("entity_type", row.entity_type),
                "description": values.get("description", row.description),
                "source_ids": row.source_ids,
                "file_paths": row.file_paths,
                # the records naming the old name reach it through the alias recorded below
                "hand_fields": values.get("hand_fields", row.hand_fields),
            },
        )
        moves = []
        for rel in await repo.relations_touching(conn, project_id, [old_key]):
            s = new_key if rel.src_key == old_key else rel.src_key
            t = new_key if rel.tgt_key == old_key else rel.tgt_key
            moves.append((rel.src_key, rel.tgt_key, *sorted_pair(s, t)))
        await repo.rekey_relations(conn, project_id, moves)
        await repo.copy_entity_sources(conn, project_id, [old_key], new_key)
        await repo.delete_entities(conn, project_id, [old_key])
        await alias_repo.repoint(conn, project_id, [old_key], new_key)
        await alias_repo.add_aliases(
            conn, project_id, new_key, [AliasItem(old_key, row.name, "manual")], overwrite=True
        )

    async def delete_entity(self, project_id: str, name: str) -> EntityDeleted:
        async with self.db.connect() as conn:
            await require_project(conn, project_id)
            key = await self._resolve(conn, project_id, name)
        async with self._locked(project_id, [key]) as conn:
            row = await repo.get_entity(conn, project_id, key)
            if row is None:
                raise not_found(name)
            relations = await repo.count_relations(conn, project_id, [key])
            await repo.delete_entities(conn, project_id, [key])
            await alias_repo.delete_aliases_of(conn, project_id, [key])
        return EntityDeleted(name=row.name, relations_deleted=relations)
