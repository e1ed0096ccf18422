"""Hand curation of relations, addressed by {source, target} in either order: list, create, edit, delete.

Each write is one short transaction under the pipeline's advisory locks on both endpoint keys that stores
the relation's vector, made beforehand with no transaction open (services/graph/vectors.py); writes on the
same entities first queue at the in-process entity gate."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from app.core.errors import Conflict, InvalidInput
from app.domain.names import sorted_pair
from app.domain.rows import RELATION_FIELDS, EntityRow, RelationRow
from app.repositories import graph_curation as repo
from app.schemas.graph import (
    RelationCreate,
    RelationDeleted,
    RelationDetail,
    RelationList,
    RelationOut,
    RelationUpdate,
    SourceChunk,
)
from app.services.graph.gate import CurationBase
from app.services.graph.inputs import clean_description, join_keywords, pair_key
from app.services.graph.lookups import not_found, relation_missing
from app.services.graph.outputs import relation_out
from app.services.graph.vectors import PreparedVectors, write_with_vectors
from app.services.projects import require_project

Pair = tuple[str, str]
MAX_RELATION_SOURCES = 200


class RelationCurationService(CurationBase):
    async def _pair(self, conn: AsyncConnection, project_id: str, source: str, target: str) -> Pair:
        """The sorted keys of the entities the two names (or aliases) name."""
        pair_key(source, target, self.max_name)  # 400 for unusable names or one name twice
        a, b = await self._resolve(conn, project_id, source), await self._resolve(conn, project_id, target)
        if a == b:
            raise InvalidInput("A relation needs two different entities", code="self_relation")
        return sorted_pair(a, b)

    async def list_relations(self, project_id: str, entity: str | None, limit: int, offset: int) -> RelationList:
        async with self.db.read() as conn:
            await require_project(conn, project_id)
            if entity is None:
                rows = await repo.list_relations(conn, project_id, limit=limit, offset=offset)
                total = await repo.count_relations(conn, project_id)
            else:
                key = await self._resolve(conn, project_id, entity)
                if await repo.get_entity(conn, project_id, key) is None:
                    raise not_found(entity)
                rows = await repo.relations_touching(conn, project_id, [key], limit=limit, offset=offset)
                total = await repo.count_relations(conn, project_id, [key])
        return RelationList(relations=[relation_out(r) for r in rows], total=total, limit=limit, offset=offset)

    async def get_relation(self, project_id: str, source: str, target: str) -> RelationDetail:
        """One relation (its ends named in either order, or by alias) with the chunks it was read from."""
        async with self.db.connect() as conn:
            await require_project(conn, project_id)
            pair = await self._pair(conn, project_id, source, target)
            row = await repo.get_relation(conn, project_id, pair)
            if row is None:
                raise relation_missing(source, target)
            sources = await repo.relation_source_chunks(conn, project_id, pair, MAX_RELATION_SOURCES)
        return RelationDetail(**relation_out(row).model_dump(), source_chunks=[SourceChunk(**s) for s in sources])

    async def create_relation(self, body: RelationCreate) -> RelationOut:
        project_id = body.project_id
        async with self.db.connect() as conn:
            await require_project(conn, project_id)
            pair = await self._pair(conn, project_id, body.source, body.target)
            found = await self._check_ends(conn, project_id, pair, body.source, body.target)
        description, keywords = clean_description(body.description), join_keywords(body.keywords)
        values = {
            "src_key": pair[0],
            "tgt_key": pair[1],
            "description": description,
            "keywords": keywords,
            "weight": body.weight,
            "hand_fields": list(RELATION_FIELDS),
        }
        vectors = PreparedVectors(self.c.embedder)

        async def write(conn: AsyncConnection, embed_here: bool) -> RelationRow | None:
            await self._check_ends(conn, project_id, pair, body.source, body.target)
            if await repo.get_relation(conn, project_id, pair) is not None:
                raise Conflict(
                    f"Relation between '{body.source}' and '{body.target}' already exists", code="relation_exists"
                )
            await repo.insert_relations(conn, project_id, [values])
            await vectors.write(conn, project_id, pairs=[pair], embed_here=embed_here)
            return await repo.get_relation(conn, project_id, pair)

        async with self._gate(project_id, pair):
            vectors.want_relation(found[pair[0]].name, found[pair[1]].name, keywords, description)
            row = await write_with_vectors(vectors, lambda: self._locked(project_id, pair, gate=False), write)
        assert row is not None
        return relation_out(row)

    async def _check_ends(
        self, conn: AsyncConnection, project_id: str, pair: Pair, source: str, target: str
    ) -> dict[str, EntityRow]:
        found = await repo.get_entities(conn, project_id, pair)
        for raw in (source, target):
            if await self._resolve(conn, project_id, raw) not in found:
                raise not_found(raw)
        return found

    async def update_relation(self, body: RelationUpdate) -> RelationOut:
        project_id = body.project_id
        async with self.db.connect() as conn:
            await require_project(conn, project_id)
            pair = await self._pair(conn, project_id, body.source, body.target)
        values: dict = {}
        if body.description is not None:
            values["description"] = clean_description(body.description)
        if body.keywords is not None:
            values["keywords"] = join_keywords(body.keywords)
        if body.weight is not None:
            values["weight"] = body.weight
        vectors = PreparedVectors(self.c.embedder)

        async def write(conn: AsyncConnection, embed_here: bool) -> RelationRow | None:
            if (current := await repo.get_relation(conn, project_id, pair)) is None:
                raise relation_missing(body.source, body.target)
            edited = {f for f in RELATION_FIELDS if f in values}  # kept by deletion rebuilds (migration 0024)
            await repo.update_relation(
                conn, project_id, pair, {**values, "hand_fields": sorted(set(current.hand_fields) | edited)}
            )
            await vectors.write(conn, project_id, pairs=[pair], embed_here=embed_here)
            return await repo.get_relation(conn, project_id, pair)

        async with self._gate(project_id, pair):
            async with self.db.connect() as conn:
                row = await repo.get_relation(conn, project_id, pair)
            if row is None:
                raise relation_missing(body.source, body.target)
            vectors.want_relation(
                row.src_name,
                row.tgt_name,
                values.get("keywords", row.keywords),
                values.get("description", row.description),
            )
            updated = await write_with_vectors(vectors, lambda: self._locked(project_id, pair, gate=False), write)
        assert updated is not None
        return relation_out(updated)

    async def delete_relation(self, project_id: str, source: str, target: str) -> RelationDeleted:
        async with self.db.connect() as conn:
            await require_project(conn, project_id)
            pair = await self._pair(conn, project_id, source, target)
        async with self._locked(project_id, pair) as conn:
            row = await repo.get_relation(conn, project_id, pair)
            if row is None:
                raise relation_missing(source, target)
            await repo.delete_relations(conn, project_id, [pair])
        return RelationDeleted(source=row.src_name, target=row.tgt_name)
