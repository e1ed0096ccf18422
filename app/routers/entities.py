"""Entities, relations, merge and graph view: thin HTTP mapping over the curation services."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.auth import ProjectScopedRoute
from app.deps import ContainerDep, ProjectQuery
from app.schemas.entities import (
    EntityCreate,
    EntityDeleted,
    EntityDetail,
    EntityList,
    EntityOut,
    EntityUpdate,
    ErrorBody,
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

router = APIRouter(tags=["entities"], route_class=ProjectScopedRoute)

Limit = Annotated[int, Query(ge=1, le=1000)]
Offset = Annotated[int, Query(ge=0, le=10_000_000)]
NameQuery = Annotated[str, Query(min_length=1, max_length=1000)]
_422 = {422: {"model": ErrorBody, "description": "Invalid input"}}
_404 = {404: {"model": ErrorBody, "description": "Unknown project or entity"}, **_422}
_409 = {409: {"model": ErrorBody, "description": "Already exists"}}


@router.get("/entities", response_model=EntityList, responses=_404)
async def list_entities(c: ContainerDep, project_id: ProjectQuery = "default",
                        q: Annotated[str | None, Query(max_length=1000, description="Name substring")] = None,
                        type: Annotated[str | None, Query(max_length=200)] = None,
                        limit: Limit = 100, offset: Offset = 0) -> EntityList:
    return await CurationService(c).list_entities(project_id, q, type, limit, offset)


@router.post("/entities", status_code=201, response_model=EntityOut, responses={**_404, **_409})
async def create_entity(body: EntityCreate, c: ContainerDep) -> EntityOut:
    return await CurationService(c).create_entity(body)


@router.post("/entities/merge", response_model=MergeReport, responses=_404)
async def merge_entities(body: MergeRequest, c: ContainerDep) -> MergeReport:
    return await EntityMergeService(c).merge(body)


@router.get("/entities/{name:path}", response_model=EntityDetail, responses=_404)
async def get_entity(name: str, c: ContainerDep, project_id: ProjectQuery = "default",
                     relation_limit: Limit = 100) -> EntityDetail:
    return await CurationService(c).get_entity(project_id, name, relation_limit)


@router.patch("/entities/{name:path}", response_model=EntityOut,
              responses={**_404, 409: {"model": ErrorBody,
                                         "description": "Rename target exists (use /entities/merge)"}})
async def update_entity(name: str, body: EntityUpdate, c: ContainerDep) -> EntityOut:
    return await CurationService(c).update_entity(name, body)


@router.delete("/entities/{name:path}", response_model=EntityDeleted, responses=_404)
async def delete_entity(name: str, c: ContainerDep, project_id: ProjectQuery = "default") -> EntityDeleted:
    return await CurationService(c).delete_entity(project_id, name)


@router.get("/relations", response_model=RelationList, responses=_404)
async def list_relations(c: ContainerDep, project_id: ProjectQuery = "default",
                         entity: Annotated[str | None, Query(min_length=1, max_length=1000)] = None,
                         limit: Limit = 100, offset: Offset = 0) -> RelationList:
    return await RelationCurationService(c).list_relations(project_id, entity, limit, offset)


@router.post("/relations", status_code=201, response_model=RelationOut, responses={**_404, **_409})
async def create_relation(body: RelationCreate, c: ContainerDep) -> RelationOut:
    return await RelationCurationService(c).create_relation(body)


@router.patch("/relations", response_model=RelationOut, responses=_404)
async def update_relation(body: RelationUpdate, c: ContainerDep) -> RelationOut:
    return await RelationCurationService(c).update_relation(body)


@router.delete("/relations", response_model=RelationDeleted, responses=_404)
async def delete_relation(source: NameQuery, target: NameQuery, c: ContainerDep,
                          project_id: ProjectQuery = "default") -> RelationDeleted:
    return await RelationCurationService(c).delete_relation(project_id, source, target)


@router.get("/graph", response_model=GraphOut, responses=_404)
async def graph(c: ContainerDep, project_id: ProjectQuery = "default",
                label: Annotated[str, Query(min_length=1, max_length=1000,
                                            description="Start entity, or `*` for the highest-degree ones")] = "*",
                max_depth: Annotated[int, Query(ge=1, le=10)] = 3,
                max_nodes: Annotated[int, Query(ge=1, le=10_000)] = 1000) -> GraphOut:
    return await GraphViewService(c).subgraph(project_id, label, max_depth, max_nodes)
