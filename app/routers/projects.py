"""Projects: thin HTTP mapping over ProjectService."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Request, Response

from app.domain.projects import PROJECT_ID_PATTERN
from app.schemas.projects import CacheCleared, ProjectCreate, ProjectList, ProjectOut, ProjectUpdate
from app.services.ingest.control import QueueControl
from app.services.projects import ProjectService
from app.web.auth import ProjectScopedRoute, principal_of, unscoped
from app.web.deps import ContainerDep
from app.web.openapi import errors

router = APIRouter(prefix="/projects", tags=["projects"], route_class=ProjectScopedRoute, responses=errors(503))

ProjectPath = Annotated[str, Path(pattern=PROJECT_ID_PATTERN)]


def _service(c: ContainerDep) -> ProjectService:
    return ProjectService(c)


@router.post(
    "",
    status_code=201,
    response_model=ProjectOut,
    responses=errors((409, "A project with this id exists (`project_exists`)")),
)
async def create_project(body: ProjectCreate, c: ContainerDep) -> ProjectOut:
    return await _service(c).create(body)


@router.get("", response_model=ProjectList)
@unscoped  # lists only the projects the key may use
async def list_projects(c: ContainerDep, request: Request) -> ProjectList:
    return ProjectList(projects=await _service(c).list(principal_of(request).allowed_projects))


@router.get("/{project_id}", response_model=ProjectOut, responses=errors(404))
async def get_project(project_id: ProjectPath, c: ContainerDep) -> ProjectOut:
    return await _service(c).get(project_id)


@router.patch("/{project_id}", response_model=ProjectOut, responses=errors(404))
async def update_project(project_id: ProjectPath, body: ProjectUpdate, c: ContainerDep) -> ProjectOut:
    return await _service(c).update(project_id, body)


@router.delete("/{project_id}", status_code=204, responses=errors(404))
async def delete_project(project_id: ProjectPath, c: ContainerDep) -> Response:
    await _service(c).delete(project_id)
    return Response(status_code=204)


@router.delete("/{project_id}/cache", response_model=CacheCleared, responses=errors(404))
async def clear_project_cache(
    project_id: ProjectPath,
    c: ContainerDep,
    kind: Annotated[
        Literal["query"],
        Query(
            description="`query`: cached query keywords and answers. Extraction "
            "and summary caches are never cleared here."
        ),
    ] = "query",
) -> CacheCleared:
    """Drop the project's cached query answers (after changing prompts or models, or to re-run queries)."""
    deleted = await QueueControl(c).clear_query_cache(project_id, kind)
    return CacheCleared(project_id=project_id, kind=kind, deleted=deleted)
