"""API keys: `Authorization: Bearer <key>` or `X-API-Key: <key>`, compared in constant time.

Configured as API_KEYS="key" (every project) or "key:proj1|proj2" (scoped), comma separated. One
app-wide dependency authenticates every route except /health and /metrics and checks the project
the request names (path, query, JSON body or form field) against the key's scope, so no router can
forget to.
"""

from __future__ import annotations

import hmac
import json
import logging
from dataclasses import dataclass

from fastapi import Request

from app.errors import Forbidden, Unauthorized
from app.logging_setup import project_var
from app.services.projects import DEFAULT_PROJECT

log = logging.getLogger(__name__)

OPEN_PATHS = {"/health", "/metrics"}


@dataclass(frozen=True)
class ApiKey:
    secret: str
    projects: frozenset[str] | None  # None: every project

    def allows(self, project_id: str) -> bool:
        return self.projects is None or project_id in self.projects


@dataclass(frozen=True)
class Principal:
    key: ApiKey | None  # None when auth is off

    def allows(self, project_id: str) -> bool:
        return self.key is None or self.key.allows(project_id)

    @property
    def allowed_projects(self) -> set[str] | None:
        return None if self.key is None or self.key.projects is None else set(self.key.projects)


def parse_api_keys(entries: list[str]) -> list[ApiKey]:
    keys = []
    for entry in entries:
        secret, _, scope = entry.partition(":")
        projects = frozenset(p.strip() for p in scope.split("|") if p.strip()) if scope else None
        if secret.strip():
            keys.append(ApiKey(secret.strip(), projects))
    return keys


def _presented_key(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return request.headers.get("x-api-key")


def _match(keys: list[ApiKey], presented: str) -> ApiKey | None:
    found = None
    for key in keys:  # compare against every key so timing does not reveal which one matched
        if hmac.compare_digest(key.secret.encode(), presented.encode()):
            found = key
    return found


async def _requested_projects(request: Request) -> set[str]:
    """Every project a request names (path, query, JSON body or form field): all must be in the key's scope,
    or a request could pass the check with one place and act on another (e.g. ?project_id=a, body b)."""
    named: set[str] = set()
    if "project_id" in request.path_params:
        named.add(str(request.path_params["project_id"]))
    named.update(request.query_params.getlist("project_id"))
    content_type = request.headers.get("content-type", "")
    if request.method in ("POST", "PUT", "PATCH", "DELETE"):
        if content_type.startswith("application/json"):
            try:
                body = json.loads(await request.body() or b"{}")
            except (ValueError, UnicodeDecodeError):
                body = None  # the route's own validation answers 422
            if isinstance(body, dict):
                if request.url.path == "/projects" and isinstance(body.get("id"), str):
                    named.add(body["id"])
                if isinstance(body.get("project_id"), str):
                    named.add(body["project_id"])
        elif content_type.startswith(("multipart/form-data", "application/x-www-form-urlencoded")):
            form = await request.form()
            named.update(v for v in form.getlist("project_id") if isinstance(v, str) and v)
    return named or {DEFAULT_PROJECT}


async def authenticate(request: Request) -> Principal:
    """App-wide dependency: resolve the caller and enforce its project scope."""
    keys: list[ApiKey] = request.app.state.api_keys
    if request.url.path not in OPEN_PATHS:  # logs of this request say which project(s) it acts on
        project_var.set(",".join(sorted(await _requested_projects(request))))
    if not keys or request.url.path in OPEN_PATHS:
        principal = Principal(None)
    else:
        presented = _presented_key(request)
        if not presented:
            raise Unauthorized("Missing API key: send 'Authorization: Bearer <key>' or 'X-API-Key: <key>'",
                               code="missing_api_key")
        key = _match(keys, presented)
        if key is None:
            raise Unauthorized("Invalid API key", code="invalid_api_key")
        principal = Principal(key)
        if request.url.path != "/projects" or request.method != "GET":
            for project_id in sorted(await _requested_projects(request)):
                if not key.allows(project_id):
                    raise Forbidden(f"This API key may not access project '{project_id}'", code="project_forbidden")
    request.state.principal = principal
    return principal


def principal_of(request: Request) -> Principal:
    return getattr(request.state, "principal", Principal(None))
