"""Hand curation of relations, addressed by {source, target} in either order: list, create, edit, delete.

Each write is one transaction under the pipeline's advisory locks on both endpoint keys and re-embeds
the relation before committing; writes on the same entities first queue at the in-process entity gate."""

from __future__ import annotations

from app.errors import Conflict
from app.repositories import curation as repo
from app.repositories import graph as graph_repo
from app.schemas.entities import RelationCreate, RelationDeleted, RelationList, RelationOut, RelationUpdate
from app.services.graph.common import (
    CurationBase,
    clean_description,
    join_keywords,
    not_found,
    pair_key,
    relation_missing,
    relation_out,
)
from app.services.graph.reembed import reembed
from app.services.projects import require_project


class RelationCurationService(CurationBase):
    def _pair(self, source: str, target: str) -> tuple[str, str]:
        return pair_key(source, target, self.max_name)

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
        async with self._gate(pid, pair), self.db.transaction() as conn:
            await require_project(conn, pid)
            await graph_repo.lock_keys(conn, pid, pair)
            found = await repo.get_entities(conn, pid, pair)
            for raw in (body.source, body.target):
                if self._key(raw) not in found:
                    raise not_found(raw)
            if await repo.get_relation(conn, pid, pair) is not None:
                raise Conflict(f"Relation between '{body.source}' and '{body.target}' already exists",
                               code="relation_exists")
            await repo.insert_relations(conn, pid, [{
                "src_key": pair[0], "tgt_key": pair[1], "description": description,
                "keywords": join_keywords(body.keywords), "weight": body.weight, "curated": True,
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
        values["curated"] = True
        async with self._gate(pid, pair), self.db.transaction() as conn:
            await require_project(conn, pid)
            await graph_repo.lock_keys(conn, pid, pair)
            if await repo.get_relation(conn, pid, pair) is None:
                raise relation_missing(body.source, body.target)
            await repo.update_relation(conn, pid, pair, values)
            await reembed(conn, self.c.embedder, pid, pairs=[pair])
            row = await repo.get_relation(conn, pid, pair)
        assert row is not None
        return relation_out(row)

    async def delete_relation(self, project_id: str, source: str, target: str) -> RelationDeleted:
        pair = self._pair(source, target)
        async with self._gate(project_id, pair), self.db.transaction() as conn:
            await require_project(conn, project_id)
            await graph_repo.lock_keys(conn, project_id, pair)
            row = await repo.get_relation(conn, project_id, pair)
            if row is None:
                raise relation_missing(source, target)
            await repo.delete_relations(conn, project_id, [pair])
        return RelationDeleted(source=row.src_name, target=row.tgt_name)
