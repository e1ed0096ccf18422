"""Entities, relations, merge and graph view: thin HTTP mapping over the curation services."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.auth import ProjectScopedRoute
from app.deps import ContainerDep, ProjectQuery
from app.openapi import MODELS_UNAVAILABLE, errors
from app.schemas.entities import (
    EntityCreate,
    EntityDeleted,
    EntityDetail,
    EntityList,
    EntityOut,
    EntityUpdate,
    GraphOut,
    MergeReport,
    MergeRequest,
    RelationCreate,
    RelationDeleted,
    RelationList,
    RelationOut,
    RelationUpdate,
)
from app.services.graph.entities import CurationService
from app.services.graph.merge import EntityMergeService
from app.services.graph.relations import RelationCurationService
from app.services.graph.view import GraphViewService

router = APIRouter(tags=["entities"], route_class=ProjectScopedRoute, responses=errors(503))

Limit = Annotated[int, Query(ge=1, le=1000)]
Offset = Annotated[int, Query(ge=0, le=10_000_000)]
NameQuery = Annotated[str, Query(min_length=1, max_length=1000)]
_NO_ENTITY = (404, "Unknown project or entity (`project_not_found`, `entity_not_found`)")
_NO_RELATION = (404, "Unknown project or relation (`project_not_found`, `relation_not_found`)")


@router.get("/entities", response_model=EntityList, responses=errors(404))
async def list_entities(c: ContainerDep, project_id: ProjectQuery = "default",
                        q: Annotated[str | None, Query(max_length=1000, description="Name substring")] = None,
                        type: Annotated[str | None, Query(max_length=200)] = None,
                        limit: Limit = 100, offset: Offset = 0) -> EntityList:
    return await CurationService(c).list_entities(project_id, q, type, limit, offset)


@router.post("/entities", status_code=201, response_model=EntityOut,
             responses=errors(404, (409, "The entity exists (`entity_exists`)"), MODELS_UNAVAILABLE))
async def create_entity(body: EntityCreate, c: ContainerDep) -> EntityOut:
    return await CurationService(c).create_entity(body)


@router.post("/entities/merge", response_model=MergeReport,
             responses=errors((404, "Unknown project or source entities (`project_not_found`, `entity_not_found`)"),
                              MODELS_UNAVAILABLE))
async def merge_entities(body: MergeRequest, c: ContainerDep) -> MergeReport:
    return await EntityMergeService(c).merge(body)


@router.get("/entities/{name:path}", response_model=EntityDetail, responses=errors(_NO_ENTITY))
async def get_entity(name: str, c: ContainerDep, project_id: ProjectQuery = "default",
                     relation_limit: Limit = 100) -> EntityDetail:
    return await CurationService(c).get_entity(project_id, name, relation_limit)


@router.patch("/entities/{name:path}", response_model=EntityOut,
              responses=errors(_NO_ENTITY, (409, "Rename target exists: use /entities/merge (`entity_exists`)"),
                               MODELS_UNAVAILABLE))
async def update_entity(name: str, body: EntityUpdate, c: ContainerDep) -> EntityOut:
    return await CurationService(c).update_entity(name, body)


@router.delete("/entities/{name:path}", response_model=EntityDeleted, responses=errors(_NO_ENTITY))
async def delete_entity(name: str, c: ContainerDep, project_id: ProjectQuery = "default") -> EntityDeleted:
    return await CurationService(c).delete_entity(project_id, name)


@router.get("/relations", response_model=RelationList, responses=errors(_NO_ENTITY))
async def list_relations(c: ContainerDep, project_id: ProjectQuery = "default",
                         entity: Annotated[str | None, Query(min_length=1, max_length=1000)] = None,
                         limit: Limit = 100, offset: Offset = 0) -> RelationList:
    return await RelationCurationService(c).list_relations(project_id, entity, limit, offset)


@router.post("/relations", status_code=201, response_model=RelationOut,
             responses=errors(_NO_ENTITY, (409, "The relation exists (`relation_exists`)"), MODELS_UNAVAILABLE))
async def create_relation(body: RelationCreate, c: ContainerDep) -> RelationOut:
    return await RelationCurationService(c).create_relation(body)


@router.patch("/relations", response_model=RelationOut, responses=errors(_NO_RELATION, MODELS_UNAVAILABLE))
async def update_relation(body: RelationUpdate, c: ContainerDep) -> RelationOut:
    return await RelationCurationService(c).update_relation(body)


@router.delete("/relations", response_model=RelationDeleted, responses=errors(_NO_RELATION))
async def delete_relation(source: NameQuery, target: NameQuery, c: ContainerDep,
                          project_id: ProjectQuery = "default") -> RelationDeleted:
    return await RelationCurationService(c).delete_relation(project_id, source, target)


@router.get("/graph", response_model=GraphOut, responses=errors(_NO_ENTITY), name="get_graph")
async def graph(c: ContainerDep, project_id: ProjectQuery = "default",
                label: Annotated[str, Query(min_length=1, max_length=1000,
                                            description="Start entity, or `*` for the highest-degree ones")] = "*",
                max_depth: Annotated[int, Query(ge=1, le=10)] = 3,
                max_nodes: Annotated[int, Query(ge=1, le=10_000)] = 1000) -> GraphOut:
    return await GraphViewService(c).subgraph(project_id, label, max_depth, max_nodes)
