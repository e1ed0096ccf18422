"""API keys and project scopes, enforced in two places that no route can skip.

- `ApiKeyMiddleware` authenticates every request from its headers alone, before any body is read: a missing
  or wrong key is a 401 even for an oversized upload. Keys go in `Authorization: Bearer <key>` or
  `X-API-Key: <key>` and are compared in constant time. /health, /metrics, the web UI's and the API docs' pages
  and static files (and the API description, /openapi.json, when PUBLIC_DOCS is set) stay open.
- `ProjectScopedRoute`, the route class of every router, checks the key's scope against the project ids the
  endpoint is actually called with (validated path and query parameters, body models), right before it runs.
  Nothing is re-parsed from the raw request, so no spelling of a media type can put a different project in
  front of the check than the one the route acts on.

API_KEYS entries are "key" (every project) or "key:proj1|proj2" (scoped), comma separated.
"""

from __future__ import annotations

import functools
import hmac
import inspect
import logging
from collections.abc import Callable, Coroutine, Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from fastapi.routing import APIRoute
from pydantic import BaseModel
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from app.core.error_codes import ErrorCode
from app.core.errors import Forbidden, Unauthorized
from app.core.logging_setup import project_var
from app.domain.projects import DEFAULT_PROJECT
from app.web.middleware import send_error
from app.web.project_param import check_query_project, guarding_query_project, where_project_is_read

log = logging.getLogger(__name__)

ALWAYS_OPEN_PATHS = frozenset({"/health", "/metrics"})
# The API description; open with PUBLIC_DOCS.
DOCS_PATHS = frozenset({"/openapi.json"})
# The web UI's static files (app/web/ui.py) and the API docs pages with theirs (app/web/api_docs.py): open to
# GET/HEAD so a page loads and then asks for a key; every API call it makes sends one.
UI_PATHS = frozenset({"/", "/ui", "/docs", "/redoc"})
UI_PREFIXES = ("/ui/", "/docs/assets/")


@dataclass(frozen=True)
class ApiKey:
    secret: str
    projects: frozenset[str] | None  # None: every project

    def allows(self, project_id: str) -> bool:
        return self.projects is None or project_id in self.projects


@dataclass(frozen=True)
class Principal:
    key: ApiKey | None  # None when auth is off or the path is open

    def allows(self, project_id: str) -> bool:
        return self.key is None or self.key.allows(project_id)

    @property
    def allowed_projects(self) -> set[str] | None:
        return None if self.key is None or self.key.projects is None else set(self.key.projects)


# Who reaches an open path (health, metrics, docs, the UI's files) while keys are configured: no project at
# all, so a route ever served under such a path could not read or write a project without a key.
ANONYMOUS = Principal(ApiKey("", frozenset()))

_principal: ContextVar[Principal | None] = ContextVar("principal", default=None)


def parse_api_keys(entries: list[str]) -> list[ApiKey]:
    keys = []
    for entry in entries:
        secret, _, scope = entry.partition(":")
        projects = frozenset(p.strip() for p in scope.split("|") if p.strip()) if scope else None
        if secret.strip():
            keys.append(ApiKey(secret.strip(), projects))
    return keys


def _presented_key(headers: Headers) -> str | None:
    header = headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return headers.get("x-api-key")


def match_key(keys: list[ApiKey], presented: str) -> ApiKey | None:
    found = None
    for key in keys:  # compare against every key so timing does not reveal which one matched
        if hmac.compare_digest(key.secret.encode(), presented.encode()):
            found = key
    return found


class ApiKeyMiddleware:
    """Pure ASGI: sets the request's principal, or answers 401 before the app (and its body parsing) runs."""

    def __init__(self, app: ASGIApp, keys: list[ApiKey], open_paths: Iterable[str]) -> None:
        self.app = app
        self.keys = keys
        self.open_paths = frozenset(open_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        principal = ANONYMOUS if self.keys else Principal(None)
        if self.keys and scope["path"] not in self.open_paths and not _is_ui_asset(scope):
            presented = _presented_key(Headers(scope=scope))
            if not presented:
                await _refuse(
                    send, "Missing API key: send 'Authorization: Bearer <key>' or 'X-API-Key: <key>'", "missing_api_key"
                )
                return
            key = match_key(self.keys, presented)
            if key is None:
                await _refuse(send, "Invalid API key", "invalid_api_key")
                return
            principal = Principal(key)
        scope.setdefault("state", {})["principal"] = principal
        token = _principal.set(principal)
        try:
            await self.app(scope, receive, send)
        finally:
            _principal.reset(token)


def _is_ui_asset(scope: Scope) -> bool:
    path = scope["path"]
    return scope["method"] in ("GET", "HEAD") and (path in UI_PATHS or path.startswith(UI_PREFIXES))


async def _refuse(send: Send, detail: str, code: ErrorCode) -> None:
    await send_error(send, 401, detail, code, [(b"www-authenticate", b"Bearer")])


def principal_of(request: Request) -> Principal:
    return getattr(request.state, "principal", None) or Principal(None)


def current_principal() -> Principal:
    """The caller of the request being served; fails closed when no authentication ran."""
    principal = _principal.get()
    if principal is None:
        raise Unauthorized("The request was not authenticated", code="missing_api_key")
    return principal


# ----- project scope at the route -----


def unscoped(endpoint: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a route that acts on no single project (e.g. listing projects, which filters by scope itself)."""
    endpoint.__acts_on_no_project__ = True  # type: ignore[attr-defined]
    return endpoint


def named_projects(values: dict[str, Any]) -> set[str]:
    """The project ids among an endpoint's validated arguments: a `project_id` parameter, and the
    `project_id` of body models or dicts. None named means the default project."""
    named: set[str] = set()
    for name, value in values.items():
        if isinstance(value, BaseModel):
            value = getattr(value, "project_id", None)
        elif isinstance(value, dict):
            value = value.get("project_id")
        elif name != "project_id":
            continue
        if isinstance(value, str):
            named.add(value)
    return named or {DEFAULT_PROJECT}


def check_scope(values: dict[str, Any]) -> None:
    projects = named_projects(values)
    project_var.set(",".join(sorted(projects)))  # logs of this request say which project(s) it acts on
    principal = current_principal()
    for project_id in sorted(projects):
        if not principal.allows(project_id):
            raise Forbidden(f"This API key may not access project '{project_id}'", code="project_forbidden")
    check_query_project(projects)


def _scope_checked(endpoint: Callable[..., Any]) -> Callable[..., Any]:
    if getattr(endpoint, "__scope_checked__", False) or getattr(endpoint, "__acts_on_no_project__", False):
        return endpoint
    if inspect.iscoroutinefunction(endpoint):

        @functools.wraps(endpoint)
        async def checked_async(**values: Any) -> Any:
            check_scope(values)
            return await endpoint(**values)

        wrapper: Callable[..., Any] = checked_async
    else:

        @functools.wraps(endpoint)
        def checked_sync(**values: Any) -> Any:
            check_scope(values)
            return endpoint(**values)

        wrapper = checked_sync
    wrapper.__scope_checked__ = True  # type: ignore[attr-defined]
    return wrapper


class ProjectScopedRoute(APIRoute):
    """An APIRoute whose endpoint first checks the caller's project scope against its own arguments, and that
    refuses a `project_id` in the query string when it reads the project from elsewhere (web/project_param.py)."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(path, _scope_checked(endpoint), **kwargs)

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        where = where_project_is_read(self.dependant)  # built before the handler is asked for
        if where is None:
            return handler
        scope_checked = getattr(self.endpoint, "__scope_checked__", False)
        return guarding_query_project(handler, where, scope_checked=scope_checked)
