"""What the LightRAG Server compatibility routers share: the workspace header that picks the project (and is
scope-checked like any `project_id`), and the documented error responses."""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import Depends, Header

from app.core.errors import InvalidInput
from app.domain.projects import DEFAULT_PROJECT, PROJECT_ID_PATTERN
from app.web.openapi import MODELS_UNAVAILABLE, errors

WORKSPACE_HEADER = "LIGHTRAG-WORKSPACE"
TAG = "lightrag-compat"
_PROJECT_ID = re.compile(PROJECT_ID_PATTERN)

NOT_SUPPORTED = (
    501,
    "A LightRAG Server feature or field this service does not implement (`not_supported`); see docs/LIGHTRAG_COMPAT.md",
)
UNKNOWN_PROJECT = (404, "The workspace names no existing project (`project_not_found`)")
ROUTER_ERRORS = errors(
    UNKNOWN_PROJECT,
    (422, f"Invalid fields (`validation_error`) or an invalid {WORKSPACE_HEADER} header (`invalid_workspace`)"),
    503,
)
WRITE_ERRORS = errors(NOT_SUPPORTED, MODELS_UNAVAILABLE)


def workspace_project(
    workspace: Annotated[
        str | None,
        Header(
            alias=WORKSPACE_HEADER,
            description="LightRAG Server's workspace: the project id; the default project when absent or empty.",
        ),
    ] = None,
) -> str:
    """The project the request acts on. Routes take it as their `project_id` argument, so the API key's
    project scope is checked against it exactly as against a `project_id` parameter."""
    name = (workspace or "").strip()
    if not name:
        return DEFAULT_PROJECT
    if not _PROJECT_ID.match(name):
        raise InvalidInput(
            f"{WORKSPACE_HEADER} '{name[:100]}' is not a project id (lowercase letters, digits, "
            "'_' and '-', at most 63 characters)",
            code="invalid_workspace",
        )
    return name


WorkspaceProject = Annotated[str, Depends(workspace_project)]
