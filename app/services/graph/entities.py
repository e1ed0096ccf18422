"""Hand curation of entities: list/search, read with provenance and relations, create, edit, rename, delete.

Every write is one transaction holding the pipeline's advisory locks on the keys it touches, and
re-embeds whatever text it changed before committing, so the stored vectors always match. Writes on the
same entity first queue at the in-process gate (curation_common.entity_gate), holding no connection."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from app.domain.names import entity_key, normalize_type, sanitize, sorted_pair
from app.domain.rows import EntityRow
from app.errors import Conflict
from app.repositories import curation as repo
from app.repositories import graph as graph_repo
from app.schemas.entities import (
    EntityCreate,
    EntityDeleted,
    EntityDetail,
    EntityList,
    EntityOut,
    EntityUpdate,
    SourceChunk,
)
from app.services.graph.common import (
    CurationBase,
    clean_description,
    display_name,
    entity_out,
    not_found,
    relation_out,
)
from app.services.graph.reembed import reembed
from app.services.projects import require_project

MAX_DETAIL_SOURCES = 1000


class CurationService(CurationBase):
    # ----- entities: reads -----

    async def list_entities(self, project_id: str, q: str | None, entity_type: str | None,
                            limit: int, offset: int) -> EntityList:
        needle = entity_key(sanitize(q)) if q and sanitize(q) else None
        type_filter = normalize_type(entity_type) if entity_type and entity_type.strip() else None
        async with self.db.connect() as conn:
            await require_project(conn, project_id)
            rows, total = await repo.list_entities(conn, project_id, q=needle, entity_type=type_filter,
                                                   limit=limit, offset=offset)
        return EntityList(entities=[entity_out(r) for r in rows], total=total, limit=limit, offset=offset)

    async def get_entity(self, project_id: str, name: str, relation_limit: int) -> EntityDetail:
        key = self._key(name)
        async with self.db.connect() as conn:
            await require_project(conn, project_id)
            row = await repo.get_entity(conn, project_id, key)
            if row is None:
                raise not_found(name)
            sources = await repo.entity_source_chunks(conn, project_id, key, MAX_DETAIL_SOURCES)
            rels = await repo.relations_touching(conn, project_id, [key], limit=relation_limit)
        return EntityDetail(**entity_out(row).model_dump(), source_ids=list(row.source_ids or []),
                            source_chunks=[SourceChunk(**s) for s in sources],
                            relations=[relation_out(r) for r in rels], relations_total=row.degree)

    # ----- entities: writes -----

    async def create_entity(self, body: EntityCreate) -> EntityOut:
        name = display_name(body.name, self.max_name)
        key = entity_key(name)
        values = {"key": key, "name": name, "description": clean_description(body.description),
                  "entity_type": normalize_type(body.entity_type or "unknown"), "curated": True}
        async with self._gate(body.project_id, [key]), self.db.transaction() as conn:
            await require_project(conn, body.project_id)
            await graph_repo.lock_keys(conn, body.project_id, [key])
            existing = await repo.get_entity(conn, body.project_id, key)
            if existing is not None:
                raise Conflict(f"Entity '{existing.name}' already exists", code="entity_exists")
            await repo.insert_entity(conn, body.project_id, values)
            await reembed(conn, self.c.embedder, body.project_id, entity_keys=[key])
            row = await repo.get_entity(conn, body.project_id, key)
        assert row is not None
        return entity_out(row)

    async def update_entity(self, name: str, body: EntityUpdate) -> EntityOut:
        pid = body.project_id
        key = self._key(name)
        values: dict = {}
        if body.description is not None:
            values["description"] = clean_description(body.description)
        if body.entity_type is not None:
            values["entity_type"] = normalize_type(body.entity_type)
        if values:
            values["curated"] = True  # a deletion rebuild keeps hand-written text (see migration 0002)
        new_name = display_name(body.new_name, self.max_name) if body.new_name is not None else None
        new_key = entity_key(new_name) if new_name else key
        async with self._gate(pid, {key, new_key}), self.db.transaction() as conn:
            await require_project(conn, pid)
            await graph_repo.lock_keys(conn, pid, {key, new_key})
            row = await repo.get_entity(conn, pid, key)
            if row is None:
                raise not_found(name)
            if new_name is not None:
                values["name"] = new_name
            if new_key != key:
                await self._rename(conn, pid, row, new_key, values)
            else:
                await repo.update_entity(conn, pid, key, values)
            await reembed(conn, self.c.embedder, pid, entity_keys=[new_key], touching=[new_key])
            row = await repo.get_entity(conn, pid, new_key)
        assert row is not None
        return entity_out(row)

    async def _rename(self, conn: AsyncConnection, pid: str, row: EntityRow, new_key: str, values: dict) -> None:
        """Create the new entity, move every relation (re-sorted pairs) and all provenance onto it, then
        drop the old row. Relation provenance follows the re-keyed relations through ON UPDATE CASCADE."""
        clash = await repo.get_entity(conn, pid, new_key)
        if clash is not None:
            raise Conflict(
                f"Entity '{clash.name}' already exists; to combine '{row.name}' into it use "
                "POST /entities/merge", code="entity_exists")
        old_key = row.key
        await repo.insert_entity(conn, pid, {
            "key": new_key, "name": values["name"],
            "entity_type": values.get("entity_type", row.entity_type),
            "description": values.get("description", row.description),
            "source_ids": row.source_ids, "file_paths": row.file_paths,
            "curated": True,  # cached extractions know it by its old name only
        })
        moves = []
        for rel in await repo.relations_touching(conn, pid, [old_key]):
            s = new_key if rel.src_key == old_key else rel.src_key
            t = new_key if rel.tgt_key == old_key else rel.tgt_key
            moves.append((rel.src_key, rel.tgt_key, *sorted_pair(s, t)))
        await repo.rekey_relations(conn, pid, moves)
        await repo.copy_entity_sources(conn, pid, [old_key], new_key)
        await repo.delete_entities(conn, pid, [old_key])

    async def delete_entity(self, project_id: str, name: str) -> EntityDeleted:
        key = self._key(name)
        async with self._gate(project_id, [key]), self.db.transaction() as conn:
            await require_project(conn, project_id)
            await graph_repo.lock_keys(conn, project_id, [key])
            row = await repo.get_entity(conn, project_id, key)
            if row is None:
                raise not_found(name)
            relations = await repo.count_relations(conn, project_id, [key])
            await repo.delete_entities(conn, project_id, [key])
        return EntityDeleted(name=row.name, relations_deleted=relations)
