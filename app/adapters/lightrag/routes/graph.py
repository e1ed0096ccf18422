"""LightRAG Server's graph routes: thin HTTP mapping over app/adapters/lightrag/translate/graph.py."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from app.adapters.lightrag.routes.common import ROUTER_ERRORS, TAG, WRITE_ERRORS, WorkspaceProject
from app.adapters.lightrag.schemas import (
    LightragDeleteEntity,
    LightragDeleteRelation,
    LightragDeletionResult,
    LightragEntitiesMerge,
    LightragEntityCreate,
    LightragEntityEdit,
    LightragEntityExists,
    LightragGraphEditResponse,
    LightragKnowledgeGraph,
    LightragRelationCreate,
    LightragRelationEdit,
)
from app.adapters.lightrag.translate.graph import LightragGraph, knowledge_graph_json
from app.web.auth import ProjectScopedRoute
from app.web.deps import ContainerDep
from app.web.graph_answers import BUSY_DOC, graph_answer
from app.web.openapi import errors

router = APIRouter(tags=[TAG], route_class=ProjectScopedRoute, responses=ROUTER_ERRORS)

MAX_DEPTH = 10
MAX_NODES = 10_000
_NO_ENTITY = errors((404, "Unknown project or entity (`project_not_found`, `entity_not_found`)"))
_NO_RELATION = errors(
    (404, "Unknown project, entity or relation (`project_not_found`, `entity_not_found`, `relation_not_found`)")
)
_EXISTS = errors((409, "The entity or relation exists (`entity_exists`, `relation_exists`)"))


@router.get("/graph/label/list", response_model=list[str], name="lightrag_graph_labels")
async def labels(project_id: WorkspaceProject, c: ContainerDep) -> list[str]:
    return await LightragGraph(c).labels(project_id)


@router.get("/graph/label/popular", response_model=list[str], name="lightrag_popular_labels")
async def popular_labels(
    project_id: WorkspaceProject, c: ContainerDep, limit: Annotated[int, Query(ge=1, le=1000)] = 300
) -> list[str]:
    return await LightragGraph(c).popular(project_id, limit)


@router.get("/graph/label/search", response_model=list[str], name="lightrag_search_labels")
async def search_labels(
    project_id: WorkspaceProject,
    c: ContainerDep,
    q: Annotated[str, Query(max_length=1000)],
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
) -> list[str]:
    return await LightragGraph(c).search(project_id, q, limit)


@router.get("/graphs", response_model=LightragKnowledgeGraph, responses=BUSY_DOC, name="lightrag_knowledge_graph")
async def knowledge_graph(
    request: Request,
    project_id: WorkspaceProject,
    c: ContainerDep,
    label: Annotated[
        str, Query(min_length=1, max_length=1000, description="Start entity, or `*` for the best connected")
    ],
    max_depth: Annotated[int, Query(ge=1)] = 3,
    max_nodes: Annotated[int, Query(ge=1)] = 1000,
) -> Response:
    # LightRAG Server clamps both to its configured maximum instead of refusing larger values.
    depth, nodes = min(max_depth, MAX_DEPTH), min(max_nodes, MAX_NODES)
    return await graph_answer(
        request, c.settings, lambda: LightragGraph(c).subgraph(project_id, label, depth, nodes), knowledge_graph_json
    )


@router.get("/graph/entity/exists", response_model=LightragEntityExists, name="lightrag_entity_exists")
async def entity_exists(
    project_id: WorkspaceProject, c: ContainerDep, name: Annotated[str, Query(min_length=1, max_length=1000)]
) -> LightragEntityExists:
    return LightragEntityExists(exists=await LightragGraph(c).exists(project_id, name))


@router.post(
    "/graph/entity/edit",
    response_model=LightragGraphEditResponse,
    name="lightrag_edit_entity",
    responses={
        **WRITE_ERRORS,
        **_NO_ENTITY,
        **errors((409, "Rename target exists and allow_merge is false (`entity_exists`)")),
    },
)
async def edit_entity(
    body: LightragEntityEdit, project_id: WorkspaceProject, c: ContainerDep
) -> LightragGraphEditResponse:
    return await LightragGraph(c).edit_entity(
        project_id, body.entity_name, body.updated_data, body.allow_rename, body.allow_merge
    )


@router.post(
    "/graph/relation/edit",
    response_model=LightragGraphEditResponse,
    name="lightrag_edit_relation",
    responses={**WRITE_ERRORS, **_NO_RELATION},
)
async def edit_relation(
    body: LightragRelationEdit, project_id: WorkspaceProject, c: ContainerDep
) -> LightragGraphEditResponse:
    return await LightragGraph(c).edit_relation(project_id, body.source_id, body.target_id, body.updated_data)


@router.post(
    "/graph/entity/create",
    response_model=LightragGraphEditResponse,
    name="lightrag_create_entity",
    responses={**WRITE_ERRORS, **_EXISTS},
)
async def create_entity(
    body: LightragEntityCreate, project_id: WorkspaceProject, c: ContainerDep
) -> LightragGraphEditResponse:
    return await LightragGraph(c).create_entity(project_id, body.entity_name, body.entity_data)


@router.post(
    "/graph/relation/create",
    response_model=LightragGraphEditResponse,
    name="lightrag_create_relation",
    responses={**WRITE_ERRORS, **_NO_ENTITY, **_EXISTS},
)
async def create_relation(
    body: LightragRelationCreate, project_id: WorkspaceProject, c: ContainerDep
) -> LightragGraphEditResponse:
    return await LightragGraph(c).create_relation(
        project_id, body.source_entity, body.target_entity, body.relation_data
    )


@router.post(
    "/graph/entities/merge",
    response_model=LightragGraphEditResponse,
    name="lightrag_merge_entities",
    responses={**WRITE_ERRORS, **_NO_ENTITY},
)
async def merge_entities(
    body: LightragEntitiesMerge, project_id: WorkspaceProject, c: ContainerDep
) -> LightragGraphEditResponse:
    return await LightragGraph(c).merge(project_id, body.entities_to_change, body.entity_to_change_into)


@router.delete(
    "/documents/delete_entity",
    response_model=LightragDeletionResult,
    name="lightrag_delete_entity",
    responses=_NO_ENTITY,
)
async def delete_entity(
    body: LightragDeleteEntity, project_id: WorkspaceProject, c: ContainerDep
) -> LightragDeletionResult:
    return await LightragGraph(c).delete_entity(project_id, body.entity_name)


@router.delete(
    "/documents/delete_relation",
    response_model=LightragDeletionResult,
    name="lightrag_delete_relation",
    responses=_NO_RELATION,
)
async def delete_relation(
    body: LightragDeleteRelation, project_id: WorkspaceProject, c: ContainerDep
) -> LightragDeletionResult:
    return await LightragGraph(c).delete_relation(project_id, body.source_entity, body.target_entity)
