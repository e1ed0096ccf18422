"""Entities, relations, merge and graph view: thin HTTP mapping over the curation services."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from app.schemas.duplicates import DuplicateAccept, DuplicateAccepted, DuplicateList, DuplicateReject, DuplicateRejected
from app.schemas.graph import (
    AliasAdd,
    AliasDetach,
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
    RelationDetail,
    RelationList,
    RelationOut,
    RelationUpdate,
)
from app.services.graph.alias_curation import AliasCurationService
from app.services.graph.duplicates import DuplicateService
from app.services.graph.entities import CurationService
from app.services.graph.entity_merge import EntityMergeService
from app.services.graph.relations import RelationCurationService
from app.services.graph.view import GraphViewService, graph_json
from app.services.merges.suggestions import SuggestionService
from app.web.auth import ProjectScopedRoute
from app.web.deps import ContainerDep, ProjectQuery
from app.web.graph_answers import BUSY_DOC, graph_answer
from app.web.openapi import MODELS_UNAVAILABLE, errors

router = APIRouter(tags=["entities"], route_class=ProjectScopedRoute, responses=errors(503))

Limit = Annotated[int, Query(ge=1, le=1000)]
Offset = Annotated[int, Query(ge=0, le=10_000_000)]
NameQuery = Annotated[str, Query(min_length=1, max_length=1000)]
_NO_ENTITY = (404, "Unknown project or entity (`project_not_found`, `entity_not_found`)")
_NO_RELATION = (404, "Unknown project or relation (`project_not_found`, `relation_not_found`)")


@router.get("/entities", response_model=EntityList, responses=errors(404))
async def list_entities(
    c: ContainerDep,
    project_id: ProjectQuery = "default",
    q: Annotated[str | None, Query(max_length=1000, description="Name substring")] = None,
    type: Annotated[str | None, Query(max_length=200)] = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> EntityList:
    return await CurationService(c).list_entities(project_id, q, type, limit, offset)


@router.post(
    "/entities",
    status_code=201,
    response_model=EntityOut,
    responses=errors(404, (409, "The entity exists (`entity_exists`)"), MODELS_UNAVAILABLE),
)
async def create_entity(body: EntityCreate, c: ContainerDep) -> EntityOut:
    return await CurationService(c).create_entity(body)


@router.post(
    "/entities/merge",
    response_model=MergeReport,
    responses=errors(
        (404, "Unknown project or source entities (`project_not_found`, `entity_not_found`)"), MODELS_UNAVAILABLE
    ),
)
async def merge_entities(body: MergeRequest, c: ContainerDep) -> MergeReport:
    """Merge the source entities into the target: their names become its aliases, their relations its own.
    The merged texts are combined from extracted ones, so a later document deletion rebuilds them from the
    remaining chunks; a description or type given in `target_entity_data` is kept as written by hand."""
    return await EntityMergeService(c).merge(body)


@router.get("/entities/duplicates", response_model=DuplicateList, responses=errors(404))
async def list_duplicates(
    c: ContainerDep,
    project_id: ProjectQuery = "default",
    limit: Limit = 50,
    offset: Offset = 0,
    threshold: Annotated[
        float | None, Query(ge=0.0, le=1.0, description="Similarity floor; ENTITY_SIMILARITY_THRESHOLD when omitted")
    ] = None,
) -> DuplicateList:
    """Possible duplicate entities, best first: suggestions stored by entity resolution and same-type
    entities with similar embeddings, with the evidence for each. Accept one with `POST /entities/merge`,
    reject it with `POST /entities/duplicates/reject`. (An entity named `duplicates` is read with
    `GET /entities?q=duplicates`.)"""
    return await DuplicateService(c).list_pairs(project_id, limit, offset, threshold)


@router.post(
    "/entities/duplicates/accept",
    response_model=DuplicateAccepted,
    responses=errors(_NO_ENTITY, (422, "The names are one entity (`same_entity`)"), MODELS_UNAVAILABLE),
)
async def accept_duplicate(body: DuplicateAccept, c: ContainerDep) -> DuplicateAccepted:
    """Merge the duplicate into the entity (its name becomes an alias) and record the merge in the merge ledger,
    confirmed: `POST /entities/{name}/unmerge` with the entry's id undoes it, rebuilding both from their
    extracted text (no extraction call)."""
    return await SuggestionService(c).accept(body)


@router.post(
    "/entities/duplicates/reject",
    response_model=DuplicateRejected,
    responses=errors(_NO_ENTITY, (422, "The names are one entity (`same_entity`)")),
)
async def reject_duplicate(body: DuplicateReject, c: ContainerDep) -> DuplicateRejected:
    """Remember that the two entities are distinct: the pair is never suggested again."""
    return await DuplicateService(c).reject(body)


@router.post(
    "/entities/{name:path}/aliases/detach",
    response_model=EntityOut,
    responses=errors(
        (404, "Unknown project, entity or alias (`project_not_found`, `entity_not_found`, `alias_not_found`)")
    ),
)
async def detach_alias(name: str, body: AliasDetach, c: ContainerDep) -> EntityOut:
    """Detach an alias: lookups by it no longer reach the entity, and later documents using it make (or keep)
    a node of their own. A POST with the alias in the body, since names may contain `/`."""
    return await AliasCurationService(c).detach_alias(name, body)


@router.post(
    "/entities/{name:path}/aliases",
    status_code=201,
    response_model=EntityOut,
    responses=errors(
        _NO_ENTITY, (409, "The alias is an entity's name (`entity_exists`) or another entity's alias (`alias_exists`)")
    ),
)
async def add_alias(name: str, body: AliasAdd, c: ContainerDep) -> EntityOut:
    """Give the entity another name (a manual alias)."""
    return await AliasCurationService(c).add_alias(name, body)


@router.get("/entities/{name:path}", response_model=EntityDetail, responses=errors(_NO_ENTITY))
async def get_entity(
    name: str, c: ContainerDep, project_id: ProjectQuery = "default", relation_limit: Limit = 100
) -> EntityDetail:
    return await CurationService(c).get_entity(project_id, name, relation_limit)


@router.patch(
    "/entities/{name:path}",
    response_model=EntityOut,
    responses=errors(
        _NO_ENTITY, (409, "Rename target exists: use /entities/merge (`entity_exists`)"), MODELS_UNAVAILABLE
    ),
)
async def update_entity(name: str, body: EntityUpdate, c: ContainerDep) -> EntityOut:
    return await CurationService(c).update_entity(name, body)


@router.delete("/entities/{name:path}", response_model=EntityDeleted, responses=errors(_NO_ENTITY))
async def delete_entity(name: str, c: ContainerDep, project_id: ProjectQuery = "default") -> EntityDeleted:
    return await CurationService(c).delete_entity(project_id, name)


@router.get("/relations", response_model=RelationList, responses=errors(_NO_ENTITY))
async def list_relations(
    c: ContainerDep,
    project_id: ProjectQuery = "default",
    entity: Annotated[str | None, Query(min_length=1, max_length=1000)] = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> RelationList:
    return await RelationCurationService(c).list_relations(project_id, entity, limit, offset)


@router.get("/relations/detail", response_model=RelationDetail, responses=errors(_NO_RELATION))
async def get_relation(
    source: NameQuery, target: NameQuery, c: ContainerDep, project_id: ProjectQuery = "default"
) -> RelationDetail:
    """One relation, its ends named in either order, with the chunks (and their files) it was extracted from."""
    return await RelationCurationService(c).get_relation(project_id, source, target)


@router.post(
    "/relations",
    status_code=201,
    response_model=RelationOut,
    responses=errors(_NO_ENTITY, (409, "The relation exists (`relation_exists`)"), MODELS_UNAVAILABLE),
)
async def create_relation(body: RelationCreate, c: ContainerDep) -> RelationOut:
    return await RelationCurationService(c).create_relation(body)


@router.patch("/relations", response_model=RelationOut, responses=errors(_NO_RELATION, MODELS_UNAVAILABLE))
async def update_relation(body: RelationUpdate, c: ContainerDep) -> RelationOut:
    return await RelationCurationService(c).update_relation(body)


@router.delete("/relations", response_model=RelationDeleted, responses=errors(_NO_RELATION))
async def delete_relation(
    source: NameQuery, target: NameQuery, c: ContainerDep, project_id: ProjectQuery = "default"
) -> RelationDeleted:
    return await RelationCurationService(c).delete_relation(project_id, source, target)


@router.get("/graph", response_model=GraphOut, responses={**errors(_NO_ENTITY), **BUSY_DOC}, name="get_graph")
async def graph(
    request: Request,
    c: ContainerDep,
    project_id: ProjectQuery = "default",
    label: Annotated[
        str, Query(min_length=1, max_length=1000, description="Start entity, or `*` for the highest-degree ones")
    ] = "*",
    max_depth: Annotated[int, Query(ge=1, le=10)] = 3,
    max_nodes: Annotated[int, Query(ge=1, le=10_000)] = 1000,
) -> Response:
    return await graph_answer(
        request, c.settings, lambda: GraphViewService(c).rows(project_id, label, max_depth, max_nodes), graph_json
    )
