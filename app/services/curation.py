"""Hand curation of the graph: list/read/create/edit/rename/delete entities and relations.

Every write is one transaction holding the pipeline's advisory locks on the keys it touches, and
re-embeds whatever text it changed before committing, so the stored vectors always match."""

from __future__ import annotations

import re

from sqlalchemy.ext.asyncio import AsyncConnection

from app.container import Container
from app.domain.names import (
    entity_key,
    lookup_key,
    normalize_description,
    normalize_name,
    normalize_type,
    sanitize,
    sorted_pair,
)
from app.errors import Conflict, InvalidInput, NotFound
from app.repositories import curation as repo
from app.repositories import projects as projects_repo
from app.schemas.entities import (
    EntityCreate,
    EntityDeleted,
    EntityDetail,
    EntityList,
    EntityOut,
    EntityUpdate,
    Keywords,
    RelationCreate,
    RelationDeleted,
    RelationList,
    RelationOut,
    RelationUpdate,
    SourceChunk,
)
from app.services.reembed import reembed

_KEYWORD_SPLIT = re.compile(r"[,\uff0c]")
MAX_DETAIL_SOURCES = 1000


# ----- shared helpers (also used by merge and graph view) -----

async def require_project(conn: AsyncConnection, project_id: str) -> None:
    if not await projects_repo.exists(conn, project_id):
        raise NotFound(f"Project '{project_id}' not found", code="project_not_found")


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


def entity_out(row: dict) -> EntityOut:
    return EntityOut(name=row["name"], entity_type=row["entity_type"], description=row["description"],
                     degree=row["degree"], file_paths=list(row["file_paths"] or []),
                     created_at=row["created_at"], updated_at=row["updated_at"])


def relation_out(row: dict) -> RelationOut:
    return RelationOut(source=row["src_name"], target=row["tgt_name"], keywords=row["keywords"],
                       description=row["description"], weight=row["weight"],
                       file_paths=list(row["file_paths"] or []),
                       created_at=row["created_at"], updated_at=row["updated_at"])


def ordered_union(*lists: list[str] | None) -> list[str]:
    seen: dict[str, None] = {}
    for items in lists:
        for item in items or []:
            seen.setdefault(item, None)
    return list(seen)


def not_found(name: str) -> NotFound:
    return NotFound(f"Entity '{name}' not found", code="entity_not_found")


class CurationService:
    def __init__(self, c: Container) -> None:
        self.c = c
        self.db = c.db
        self.max_name = c.settings.entity_name_max_length

    def _key(self, name: str) -> str:
        key = lookup_key(sanitize(name), self.max_name)
        if not key:
            raise InvalidInput(f"'{name}' is not a usable entity name", code="invalid_entity_name")
        return key

    def _pair(self, source: str, target: str) -> tuple[str, str]:
        a, b = self._key(source), self._key(target)
        if a == b:
            raise InvalidInput("A relation needs two different entities", code="self_relation")
        return sorted_pair(a, b)

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
        return EntityDetail(**entity_out(row).model_dump(), source_ids=list(row["source_ids"] or []),
                            source_chunks=[SourceChunk(**s) for s in sources],
                            relations=[relation_out(r) for r in rels], relations_total=row["degree"])

    # ----- entities: writes -----

    async def create_entity(self, body: EntityCreate) -> EntityOut:
        name = display_name(body.name, self.max_name)
        key = entity_key(name)
        values = {"key": key, "name": name, "description": clean_description(body.description),
                  "entity_type": normalize_type(body.entity_type or "unknown")}
        async with self.db.transaction() as conn:
            await require_project(conn, body.project_id)
            await repo.lock_keys(conn, body.project_id, [key])
            existing = await repo.get_entity(conn, body.project_id, key)
            if existing is not None:
                raise Conflict(f"Entity '{existing['name']}' already exists", code="entity_exists")
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
        new_name = display_name(body.new_name, self.max_name) if body.new_name is not None else None
        new_key = entity_key(new_name) if new_name else key
        async with self.db.transaction() as conn:
            await require_project(conn, pid)
            await repo.lock_keys(conn, pid, {key, new_key})
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

    async def _rename(self, conn: AsyncConnection, pid: str, row: dict, new_key: str, values: dict) -> None:
        """Create the new entity, move every relation (re-sorted pairs) and all provenance onto it, then
        drop the old row. Relation provenance follows the re-keyed relations through ON UPDATE CASCADE."""
        clash = await repo.get_entity(conn, pid, new_key)
        if clash is not None:
            raise Conflict(
                f"Entity '{clash['name']}' already exists; to combine '{row['name']}' into it use "
                "POST /entities/merge", code="entity_exists")
        old_key = row["key"]
        await repo.insert_entity(conn, pid, {
            "key": new_key, "name": values["name"],
            "entity_type": values.get("entity_type", row["entity_type"]),
            "description": values.get("description", row["description"]),
            "source_ids": row["source_ids"], "file_paths": row["file_paths"],
        })
        moves = []
        for rel in await repo.relations_touching(conn, pid, [old_key]):
            s = new_key if rel["src_key"] == old_key else rel["src_key"]
            t = new_key if rel["tgt_key"] == old_key else rel["tgt_key"]
            moves.append((rel["src_key"], rel["tgt_key"], *sorted_pair(s, t)))
        await repo.rekey_relations(conn, pid, moves)
        await repo.copy_entity_sources(conn, pid, [old_key], new_key)
        await repo.delete_entities(conn, pid, [old_key])

    async def delete_entity(self, project_id: str, name: str) -> EntityDeleted:
        key = self._key(name)
        async with self.db.transaction() as conn:
            await require_project(conn, project_id)
            await repo.lock_keys(conn, project_id, [key])
            row = await repo.get_entity(conn, project_id, key)
            if row is None:
                raise not_found(name)
            relations = await repo.count_relations(conn, project_id, [key])
            await repo.delete_entities(conn, project_id, [key])
        return EntityDeleted(name=row["name"], relations_deleted=relations)

    # ----- relations -----

    async def list_relations(self, project_id: str, entity: str | None, limit: int, offset: int) -> RelationList:
        async with self.db.connect() as conn:
            await require_project(conn, project_id)
            if entity is None:
                rows = await repo.list_relations(conn, project_id, limit=limit, offset=offset)
                total = await repo.count_relations(conn, project_id)
            else:
                key = self._key(entity)
                if await repo.get_entity(conn, project_id, key) is None:
                    raise not_found(entity)
                rows = await repo.relations_touching(conn, project_id, [key], limit=limit, offset=offset)
                total = await repo.count_relations(conn, project_id, [key])
        return RelationList(relations=[relation_out(r) for r in rows], total=total, limit=limit, offset=offset)

    async def create_relation(self, body: RelationCreate) -> RelationOut:
        pid = body.project_id
        pair = self._pair(body.source, body.target)
        description = clean_description(body.description)
        async with self.db.transaction() as conn:
            await require_project(conn, pid)
            await repo.lock_keys(conn, pid, pair)
            found = await repo.get_entities(conn, pid, pair)
            for raw in (body.source, body.target):
                if self._key(raw) not in found:
                    raise not_found(raw)
            if await repo.get_relation(conn, pid, pair) is not None:
                raise Conflict(f"Relation between '{body.source}' and '{body.target}' already exists",
                               code="relation_exists")
            await repo.insert_relations(conn, pid, [{
                "src_key": pair[0], "tgt_key": pair[1], "description": description,
                "keywords": join_keywords(body.keywords), "weight": body.weight,
            }])
            await reembed(conn, self.c.embedder, pid, pairs=[pair])
            row = await repo.get_relation(conn, pid, pair)
        assert row is not None
        return relation_out(row)

    async def update_relation(self, body: RelationUpdate) -> RelationOut:
        pid = body.project_id
        pair = self._pair(body.source, body.target)
        values: dict = {}
        if body.description is not None:
            values["description"] = clean_description(body.description)
        if body.keywords is not None:
            values["keywords"] = join_keywords(body.keywords)
        if body.weight is not None:
            values["weight"] = body.weight
        async with self.db.transaction() as conn:
            await require_project(conn, pid)
            await repo.lock_keys(conn, pid, pair)
            if await repo.get_relation(conn, pid, pair) is None:
                raise self._relation_missing(body.source, body.target)
            await repo.update_relation(conn, pid, pair, values)
            await reembed(conn, self.c.embedder, pid, pairs=[pair])
            row = await repo.get_relation(conn, pid, pair)
        assert row is not None
        return relation_out(row)

    async def delete_relation(self, project_id: str, source: str, target: str) -> RelationDeleted:
        pair = self._pair(source, target)
        async with self.db.transaction() as conn:
            await require_project(conn, project_id)
            await repo.lock_keys(conn, project_id, pair)
            row = await repo.get_relation(conn, project_id, pair)
            if row is None:
                raise self._relation_missing(source, target)
            await repo.delete_relations(conn, project_id, [pair])
        return RelationDeleted(source=row["src_name"], target=row["tgt_name"])

    @staticmethod
    def _relation_missing(source: str, target: str) -> NotFound:
        return NotFound(f"No relation between '{source}' and '{target}'", code="relation_not_found")

