"""Projects: thin HTTP mapping over ProjectService."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request, Response

from app.auth import ProjectScopedRoute, principal_of, unscoped
from app.deps import ContainerDep
from app.domain.projects import PROJECT_ID_PATTERN
from app.schemas.projects import ProjectCreate, ProjectList, ProjectOut, ProjectUpdate
from app.services.projects import ProjectService

router = APIRouter(prefix="/projects", tags=["projects"], route_class=ProjectScopedRoute)

ProjectPath = Annotated[str, Path(pattern=PROJECT_ID_PATTERN)]


def _service(c: ContainerDep) -> ProjectService:
    return ProjectService(c.db, c.settings)


@router.post("", status_code=201, response_model=ProjectOut, responses={409: {"description": "Exists"}})
async def create_project(body: ProjectCreate, c: ContainerDep) -> ProjectOut:
    return await _service(c).create(body)


@router.get("", response_model=ProjectList)
@unscoped  # lists only the projects the key may use
async def list_projects(c: ContainerDep, request: Request) -> ProjectList:
    return ProjectList(projects=await _service(c).list(principal_of(request).allowed_projects))


@router.get("/{project_id}", response_model=ProjectOut, responses={404: {"description": "Unknown project"}})
async def get_project(project_id: ProjectPath, c: ContainerDep) -> ProjectOut:
    return await _service(c).get(project_id)


@router.patch("/{project_id}", response_model=ProjectOut, responses={404: {"description": "Unknown project"}})
async def update_project(project_id: ProjectPath, body: ProjectUpdate, c: ContainerDep) -> ProjectOut:
    return await _service(c).update(project_id, body)


@router.delete("/{project_id}", status_code=204, responses={404: {"description": "Unknown project"}})
async def delete_project(project_id: ProjectPath, c: ContainerDep) -> Response:
    await _service(c).delete(project_id)
    return Response(status_code=204)
