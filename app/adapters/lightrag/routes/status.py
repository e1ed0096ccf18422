"""LightRAG Server's /health, and its routes this service does not implement: each answers 501 with a reason
instead of a 404 or a look-alike answer."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import APIRouter, Request

from app.adapters.lightrag.routes.common import NOT_SUPPORTED, ROUTER_ERRORS, TAG, WorkspaceProject
from app.adapters.lightrag.translate.health import lightrag_health
from app.adapters.lightrag.translate.unsupported import NotSupported
from app.web.auth import ProjectScopedRoute, unscoped
from app.web.deps import ContainerDep
from app.web.openapi import errors

unsupported_router = APIRouter(tags=[TAG], route_class=ProjectScopedRoute)

# (method, path, reason) of LightRAG Server routes without an equivalent here.
UNSUPPORTED: list[tuple[str, str, str]] = [
    ("POST", "/documents/scan", "there is no input directory to scan: send files to /documents/upload"),
    (
        "DELETE",
        "/documents",
        "clearing every document at once is not offered: delete a project, or documents "
        "by id with /documents/delete_document",
    ),
    ("GET", "/documents", "deprecated in LightRAG Server: use POST /documents/paginated"),
    ("POST", "/documents/clear_cache", "the LLM cache is kept per project and not cleared through this API"),
    ("POST", "/documents/reprocess_failed", "use POST /documents/retry-failed of the service's own API"),
    ("POST", "/documents/cancel_pipeline", "the queue is shared by workers and cannot be cancelled"),
    ("GET", "/auth-status", "authentication is by API key (Authorization: Bearer or X-API-Key), not login"),
    ("POST", "/login", "authentication is by API key (Authorization: Bearer or X-API-Key), not login"),
]


async def health(project_id: WorkspaceProject, c: ContainerDep, request: Request) -> dict[str, Any]:
    return await lightrag_health(c, project_id, bool(request.app.state.api_keys), request.app.version)


def add_health(router: APIRouter) -> None:
    """Add /health to the prefixed router itself: a route of an included router keeps its path without the
    prefix, and a bare "/health" would be taken for the service's open /health (which needs no key)."""
    router.add_api_route(
        "/health",
        health,
        methods=["GET"],
        name="lightrag_health",
        tags=[TAG],
        route_class_override=ProjectScopedRoute,
        responses={
            **ROUTER_ERRORS,
            **errors(
                (503, "The database is unreachable or behind on migrations (`not_ready`, `database_unavailable`)")
            ),
        },
    )


def _refusal(reason: str) -> Callable[[], Coroutine[Any, Any, None]]:
    @unscoped
    async def refuse() -> None:
        raise NotSupported(f"Not supported by this service: {reason}")

    return refuse


for _method, _path, _reason in UNSUPPORTED:
    _name = (
        "lightrag_unsupported_" + "_".join(p for p in _path.replace("-", "_").split("/") if p) + f"_{_method.lower()}"
    )
    unsupported_router.add_api_route(
        _path,
        _refusal(_reason),
        methods=[_method],
        name=_name,
        status_code=501,
        responses=errors(NOT_SUPPORTED),
        summary=f"Not supported: {_reason}",
    )
