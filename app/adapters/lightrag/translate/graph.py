"""LightRAG Server's graph routes on top of the curation services (entities, relations, merge, graph view):
argument and answer translation only. A graph property LightRAG Server would store but this service has no
field for is refused with 501 (NotSupported), never dropped silently."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from app.adapters.lightrag.schemas import (
    LightragDeletionResult,
    LightragGraphEditResponse,
)
from app.adapters.lightrag.translate.query import SEP
from app.adapters.lightrag.translate.unsupported import NotSupported
from app.container import Container
from app.core.errors import InvalidInput, NotFound
from app.domain.json_slices import json_object
from app.schemas.graph import (
    EntityCreate,
    EntityDetail,
    EntityOut,
    EntityUpdate,
    MergeRequest,
    RelationCreate,
    RelationOut,
    RelationUpdate,
)
from app.services.graph.entities import CurationService
from app.services.graph.entity_merge import EntityMergeService
from app.services.graph.relations import RelationCurationService
from app.services.graph.view import GraphViewService, Subgraph, graph_fields

MAX_LABELS = 10_000  # /graph/label/list answers at most this many names (highest degree first, then sorted)
_PAGE = 1000
_ENTITY_FIELDS = {"entity_name", "description", "entity_type"}
_RELATION_FIELDS = {"description", "keywords", "weight"}
Model = TypeVar("Model", bound=BaseModel)


def _build(model: type[Model], values: dict[str, Any]) -> Model:
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        fields = [{"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]} for e in exc.errors()]
        raise InvalidInput(json.dumps(fields), code="validation_error") from exc


def _refuse_unknown(data: dict[str, Any], known: set[str], what: str) -> None:
    unknown = sorted(set(data) - known)
    if unknown:
        raise NotSupported(
            f"{what} fields not supported by this service: {', '.join(unknown)} (supported: {', '.join(sorted(known))})"
        )


def knowledge_graph_json(sub: Subgraph) -> bytes:
    """The body of GET /graphs (a LightragKnowledgeGraph): CPU-bound, run it in a worker thread."""
    graph = graph_fields(sub, raw_descriptions=True)
    nodes = [
        {
            "id": n["id"],
            "labels": [n["id"]],
            "properties": {
                "entity_id": n["id"],
                "entity_type": n["entity_type"],
                "description": n["description"],
                "degree": n["degree"],
            },
        }
        for n in graph["nodes"]
    ]
    edges = [
        {
            "id": f"{e['source']}-{e['target']}",
            "type": "DIRECTED",
            "source": e["source"],
            "target": e["target"],
            "properties": {"weight": e["weight"], "keywords": e["keywords"], "description": e["description"]},
        }
        for e in graph["edges"]
    ]
    return json_object({"nodes": nodes, "edges": edges, "is_truncated": graph["is_truncated"]})


def entity_data(entity: EntityOut | EntityDetail) -> dict[str, Any]:
    data: dict[str, Any] = {
        "entity_name": entity.name,
        "entity_type": entity.entity_type,
        "description": entity.description,
        "file_path": SEP.join(entity.file_paths),
    }
    if isinstance(entity, EntityDetail):
        data["source_id"] = SEP.join(entity.source_ids)
    return data


def relation_data(relation: RelationOut) -> dict[str, Any]:
    return {
        "src_id": relation.source,
        "tgt_id": relation.target,
        "description": relation.description,
        "keywords": relation.keywords,
        "weight": relation.weight,
        "file_path": SEP.join(relation.file_paths),
    }


def _is_missing_entity(exc: NotFound) -> bool:
    return exc.code == "entity_not_found"


class LightragGraph:
    def __init__(self, c: Container) -> None:
        self.c = c
        self.entities = CurationService(c)
        self.relations = RelationCurationService(c)

    # ----- reads -----
    async def labels(self, project_id: str) -> list[str]:
        names: list[str] = []
        while len(names) < MAX_LABELS:
            page = await self.entities.list_entities(project_id, None, None, _PAGE, len(names))
            names += [e.name for e in page.entities]
            if len(page.entities) < _PAGE:
                break
        return sorted(names[:MAX_LABELS], key=str.casefold)

    async def popular(self, project_id: str, limit: int) -> list[str]:
        page = await self.entities.list_entities(project_id, None, None, limit, 0)
        return [e.name for e in page.entities]

    async def search(self, project_id: str, q: str, limit: int) -> list[str]:
        if not q.strip():
            return []
        page = await self.entities.list_entities(project_id, q, None, limit, 0)
        return [e.name for e in page.entities]

    async def subgraph(self, project_id: str, label: str, max_depth: int, max_nodes: int) -> Subgraph:
        try:
            return await GraphViewService(self.c).rows(project_id, label, max_depth, max_nodes)
        except NotFound as exc:  # LightRAG Server answers an unknown start label with an empty graph
            if not _is_missing_entity(exc):
                raise
            return Subgraph([], [], False)

    async def exists(self, project_id: str, name: str) -> bool:
        try:
            await self.entities.get_entity(project_id, name, 1, by_alias=False)
        except NotFound as exc:
            if not _is_missing_entity(exc):
                raise
            return False
        return True

    # ----- writes -----
    async def edit_entity(
        self, project_id: str, name: str, updated: dict[str, Any], allow_rename: bool, allow_merge: bool
    ) -> LightragGraphEditResponse:
        _refuse_unknown(updated, _ENTITY_FIELDS, "updated_data")
        new_name = updated.get("entity_name")
        renamed = new_name is not None and new_name != name
        if renamed and not allow_rename:
            raise InvalidInput(
                "Entity renaming is not allowed. Set allow_rename=True to enable this feature",
                code="rename_not_allowed",
            )
        changes: dict[str, Any] = {k: updated[k] for k in ("description", "entity_type") if k in updated}
        merged = renamed and allow_merge and await self.exists(project_id, str(new_name))
        if merged:
            if changes:
                await self.entities.update_entity(name, _build(EntityUpdate, {"project_id": project_id, **changes}))
            await EntityMergeService(self.c).merge(
                _build(MergeRequest, {"project_id": project_id, "source_entities": [name], "target_entity": new_name})
            )
        else:
            if renamed:
                changes["new_name"] = new_name
            await self.entities.update_entity(name, _build(EntityUpdate, {"project_id": project_id, **changes}))
        final = str(new_name) if renamed else name
        detail = await self.entities.get_entity(project_id, final, 1)
        summary = {
            "merged": merged,
            "merge_status": "success" if merged else "not_attempted",
            "merge_error": None,
            "operation_status": "success",
            "target_entity": new_name if renamed else None,
            "final_entity": detail.name,
            "renamed": renamed,
        }
        message = f"Entity merged successfully into '{detail.name}'" if merged else "Entity updated successfully"
        return LightragGraphEditResponse(message=message, data=entity_data(detail), operation_summary=summary)

    async def edit_relation(
        self, project_id: str, source: str, target: str, updated: dict[str, Any]
    ) -> LightragGraphEditResponse:
        _refuse_unknown(updated, _RELATION_FIELDS, "updated_data")
        body = _build(RelationUpdate, {"project_id": project_id, "source": source, "target": target, **updated})
        relation = await self.relations.update_relation(body)
        return LightragGraphEditResponse(message="Relation updated successfully", data=relation_data(relation))

    async def create_entity(self, project_id: str, name: str, data: dict[str, Any]) -> LightragGraphEditResponse:
        _refuse_unknown(data, _ENTITY_FIELDS - {"entity_name"}, "entity_data")
        body = _build(EntityCreate, {"project_id": project_id, "name": name, **data})
        entity = await self.entities.create_entity(body)
        return LightragGraphEditResponse(
            message=f"Entity '{entity.name}' created successfully", data=entity_data(entity)
        )

    async def create_relation(
        self, project_id: str, source: str, target: str, data: dict[str, Any]
    ) -> LightragGraphEditResponse:
        _refuse_unknown(data, _RELATION_FIELDS, "relation_data")
        body = _build(RelationCreate, {"project_id": project_id, "source": source, "target": target, **data})
        relation = await self.relations.create_relation(body)
        return LightragGraphEditResponse(
            message=f"Relation created successfully between '{relation.source}' and '{relation.target}'",
            data=relation_data(relation),
        )

    async def merge(self, project_id: str, sources: list[str], target: str) -> LightragGraphEditResponse:
        report = await EntityMergeService(self.c).merge(
            _build(MergeRequest, {"project_id": project_id, "source_entities": sources, "target_entity": target})
        )
        return LightragGraphEditResponse(
            message=f"Successfully merged {len(report.merged_sources)} entities into '{report.target}'",
            data={
                "merged_entity": report.target,
                "deleted_entities": report.merged_sources,
                "relationships_transferred": report.relations_redirected + report.relations_merged,
                **report.model_dump(),
            },
        )

    async def delete_entity(self, project_id: str, name: str) -> LightragDeletionResult:
        gone = await self.entities.delete_entity(project_id, name)
        return LightragDeletionResult(
            status="success",
            doc_id="",
            message=(f"Entity '{gone.name}' and its {gone.relations_deleted} relationships have been deleted."),
        )

    async def delete_relation(self, project_id: str, source: str, target: str) -> LightragDeletionResult:
        gone = await self.relations.delete_relation(project_id, source, target)
        return LightragDeletionResult(
            status="success", doc_id="", message=(f"Relation from '{gone.source}' to '{gone.target}' has been deleted.")
        )
