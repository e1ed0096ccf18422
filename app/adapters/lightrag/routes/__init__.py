"""Routes shaped like LightRAG Server's (documents, query, graph, health), mounted under
LIGHTRAG_COMPAT_PREFIX so its clients and scripts work unchanged. docs/LIGHTRAG_COMPAT.md lists what is
supported; the LIGHTRAG-WORKSPACE header picks the project."""

from __future__ import annotations

from fastapi import APIRouter

from app.adapters.lightrag.routes import documents, graph, query, status

DISABLED = ("", "off")


def build_router(prefix: str) -> APIRouter | None:
    """The compatibility routes under the configured prefix (LIGHTRAG_COMPAT_PREFIX), or None when it is off."""
    if prefix in DISABLED:
        return None
    router = APIRouter(prefix=prefix)
    for module in (documents, query, graph):
        router.include_router(module.router)
    router.include_router(status.unsupported_router)
    status.add_health(router)
    return router
