"""FastAPI dependencies: the container, and validation dependencies reused by every route."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query, Request

from app.container import Container
from app.domain.projects import PROJECT_ID_PATTERN

__all__ = ["ContainerDep", "ProjectQuery", "get_container"]


def get_container(request: Request) -> Container:
    return request.app.state.container


ContainerDep = Annotated[Container, Depends(get_container)]

ProjectQuery = Annotated[str, Query(pattern=PROJECT_ID_PATTERN, description="Project id; `default` when omitted.")]
