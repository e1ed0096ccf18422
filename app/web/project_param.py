"""A `project_id` in the query string of a route that reads the project from elsewhere (its JSON body, a form
field, its path, the LightRAG workspace header, a chat model's name) must name the project the request acts on,
else it is refused with a 422 that says where the project goes: ignored, it would leave the request acting on
the default project or on the one the body names, not on the one the caller meant (a cancel, a retry or an
ingest in the wrong project). The same project in both places is accepted. The scope check, which knows the
projects a request acts on (web/auth.py), compares them; a route acting on no single project refuses any."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from fastapi import Request, params
from fastapi.dependencies.models import Dependant
from pydantic import BaseModel
from starlette.responses import Response

from app.core.errors import InvalidInput

PROJECT = "project_id"
Handler = Callable[[Request], Coroutine[Any, Any, Response]]


def _flat(dependant: Dependant) -> list[Dependant]:
    found, stack = [], [dependant]
    while stack:
        found.append(current := stack.pop())
        stack.extend(current.dependencies)
    return found


def _has_field(annotation: Any, name: str) -> bool:
    """Whether the body's model (or one of a union's) has the field."""
    models = (annotation, *getattr(annotation, "__args__", ()))
    return any(isinstance(m, type) and issubclass(m, BaseModel) and name in m.model_fields for m in models)


def _body_names_project(dependant: Dependant) -> str | None:
    for field in dependant.body_params:
        if field.name == PROJECT:
            return "as a form field" if isinstance(field.field_info, params.Form) else "in the request body"
        if _has_field(field.field_info.annotation, PROJECT):
            return "in the JSON body"
    return None


def where_project_is_read(dependant: Dependant) -> str | None:
    """Where the route reads its project, when not from the query string (None: it does read it there)."""
    parts = _flat(dependant)
    if any(p.name == PROJECT for part in parts for p in part.query_params):
        return None
    if any(p.name == PROJECT for part in parts for p in part.path_params):
        return "the path names the project"
    for part in parts:
        if (place := _body_names_project(part)) is not None:
            return f"give it {place}"
    if any(p.alias.lower() == "lightrag-workspace" for part in parts for p in part.header_params):
        return "the LIGHTRAG-WORKSPACE header names the project"
    if any(_has_field(p.field_info.annotation, "model") for part in parts for p in part.body_params):
        return "the model ('lightrag:<project>') names the project"
    return "this route takes no project_id"


@dataclass(frozen=True)
class _Asked:
    project: str
    request: str  # "POST /documents"
    where: str


_asked: ContextVar[_Asked | None] = ContextVar("query_project", default=None)


def _refusal(asked: _Asked, acts_on: str) -> InvalidInput:
    return InvalidInput(
        f"{asked.request} does not read project_id from the query string: {asked.where} (the query string names "
        f"'{asked.project}', {acts_on})",
        code="validation_error",
    )


def guarding_query_project(handler: Handler, where: str, *, scope_checked: bool) -> Handler:
    """The route's handler, a `project_id` of the query string kept for the scope check to compare with the
    projects the request acts on (`check_query_project`), or refused at once on a route that checks no scope."""

    async def handle(request: Request) -> Response:
        project = request.query_params.get(PROJECT)
        asked = None if project is None else _Asked(project, f"{request.method} {request.url.path}", where)
        if asked is not None and not scope_checked:
            raise _refusal(asked, "and the request acts on no project it names")
        token = _asked.set(asked)
        try:
            return await handler(request)
        finally:
            _asked.reset(token)

    return handle


def check_query_project(projects: Iterable[str]) -> None:
    """Refuse the request when its query string names a project other than the ones it acts on."""
    asked = _asked.get()
    named = sorted(projects)
    if asked is not None and asked.project not in named:
        raise _refusal(asked, "the request acts on " + ", ".join(f"'{p}'" for p in named))
