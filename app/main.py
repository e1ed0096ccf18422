"""Application factory and lifespan: the container (app/wiring.py), the in-process worker, middleware, routers."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cache

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute, Route

from app.adapters.chat import ollama_routes, openai_routes
from app.adapters.lightrag import routes as lightrag_routes_module
from app.adapters.mcp.http import McpEndpoint
from app.adapters.mcp.stdio import serve_stdio, stdio_principal
from app.core.config import Settings, get_settings
from app.core.logging_setup import configure_logging
from app.core.process_gc import freeze_start_up_objects
from app.core.startup import OneLineStartupRefusal, unreachable_database
from app.db.engine import Database
from app.db.errors import is_connection_error
from app.routers import document_versions, documents, export, graph, merges, ops, projects, query
from app.web.api_docs import install_api_docs
from app.web.auth import ALWAYS_OPEN_PATHS, DOCS_PATHS, ApiKeyMiddleware, ProjectScopedRoute, parse_api_keys
from app.web.error_handlers import install_error_handlers
from app.web.middleware import BodyLimitMiddleware, RequestContextMiddleware
from app.web.openapi import describe_api, operation_id
from app.web.read_after import ReadYourWritesMiddleware
from app.web.ui import install_ui
from app.wiring import build_container, close_container
from app.worker.queue import Worker

log = logging.getLogger(__name__)

API_VERSION = "0.1.0"


def create_app(settings: Settings | None = None, database: Database | None = None) -> FastAPI:
    """`database`: an open one to use instead of connecting to DATABASE_URL; the caller keeps and closes it
    (the tests hand one database's warm connection pool from app to app)."""
    settings = settings or get_settings()
    mcp_endpoint = McpEndpoint(read_only=settings.mcp_read_only, version=API_VERSION)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        configure_logging(settings.log_level, settings.log_format)
        try:
            container = await build_container(settings, database)
        except Exception as exc:
            if database is None and is_connection_error(exc):  # the worker waits for it; the API says what to fix
                raise unreachable_database(settings, exc) from exc
            raise
        app.state.container = container
        if not app.state.api_keys:
            log.warning(
                "API_KEYS is empty: the API is open to anyone who can reach it. `python -m app` then "
                "listens on 127.0.0.1 only; set API_KEYS before exposing it (HOST=0.0.0.0)"
            )
        if not settings.llm_configured:
            log.warning("no LLM configured: ingestion and queries answer 503 until LLM_MODEL/LLM_BASE_URL are set")
        if settings.worker_enabled:
            worker = container.worker = Worker(container)
            await worker.start()
        freeze_start_up_objects()
        try:
            async with mcp_endpoint.running():
                yield
        finally:
            await close_container(container)

    app = FastAPI(
        title="LightRAG Service",
        version=API_VERSION,
        description="Documents to a knowledge graph with an LLM, queried in six modes, on PostgreSQL + pgvector.",
        lifespan=lifespan,
        generate_unique_id_function=operation_id,
        docs_url=None,  # /docs and /redoc with their files served from here, no CDN: app/web/api_docs.py
        redoc_url=None,
    )
    app.router.route_class = ProjectScopedRoute  # routes added on the app itself are scope-checked too
    app.state.api_keys = parse_api_keys(settings.api_keys)
    install_error_handlers(app)
    open_paths = ALWAYS_OPEN_PATHS | (DOCS_PATHS if settings.public_docs else frozenset())
    # Added innermost first (the app's side): read-your-writes (it needs the client's key), the body limit,
    # authentication, the request context.
    app.add_middleware(ReadYourWritesMiddleware)
    app.add_middleware(
        BodyLimitMiddleware, max_body_bytes=settings.max_request_bytes, max_json_values=settings.max_request_json_values
    )
    app.add_middleware(ApiKeyMiddleware, keys=app.state.api_keys, open_paths=open_paths)
    app.add_middleware(RequestContextMiddleware)
    if settings.cors_origins:  # outermost: preflights are answered before authentication, errors carry CORS
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["*"],
            allow_headers=["*"],
            expose_headers=["X-Request-ID", "X-Token-Input", "X-Token-Output", "X-Read-After-LSN"],
        )
    app.add_middleware(OneLineStartupRefusal)  # lifespan only: a refusal to start is one line, not a traceback
    app.router.routes.extend(_included_routes(settings.lightrag_compat_prefix))
    # Model Context Protocol (app/adapters/mcp): a plain route, so the OpenAPI document does not list it.
    app.router.routes.append(Route("/mcp", mcp_endpoint, name="mcp"))
    install_ui(app)
    install_api_docs(app)
    _require_scoped_routes(app)
    describe_api(app, api_routes(app.routes))
    return app


@cache
def _included_routes(lightrag_compat_prefix: str) -> tuple[BaseRoute, ...]:
    """The API routers, included once per process and shared by every app built here. Including a router makes
    FastAPI resolve each route's fields and dependencies for the including app (~0.1 s for this API), and the
    resolved routes depend on nothing per app: the holder is built exactly as create_app builds an app."""
    holder = FastAPI(generate_unique_id_function=operation_id)
    holder.router.route_class = ProjectScopedRoute
    own_routes = len(holder.router.routes)  # the docs routes every FastAPI app adds for itself
    for module in (
        projects,
        documents,
        document_versions,
        query,
        merges,
        graph,
        export,
        ops,
        ollama_routes,
        openai_routes,
    ):
        holder.include_router(module.router)
    if (lightrag_routes := lightrag_routes_module.build_router(lightrag_compat_prefix)) is not None:
        holder.include_router(lightrag_routes)
    return tuple(holder.router.routes[own_routes:])


def api_routes(routes: list[BaseRoute]) -> list[APIRoute]:
    """Every APIRoute of an app or router, also inside included routers (kept as nested routers)."""
    found: list[APIRoute] = []
    for route in routes:
        if isinstance(route, APIRoute):
            found.append(route)
        elif (nested := getattr(route, "original_router", None)) is not None:
            found.extend(api_routes(nested.routes))
    return found


def _require_scoped_routes(app: FastAPI) -> None:
    """Every API route checks the project scope; a router built without the scoped route class is a bug."""
    routes = api_routes(app.routes)
    unscoped = [r.path for r in routes if not isinstance(r, ProjectScopedRoute)]
    if not routes or unscoped:
        raise RuntimeError(f"routes without the project-scope check: {unscoped or 'no API route found'}")


async def serve_mcp_stdio(settings: Settings, api_key: str | None) -> None:
    """`lightrag-service mcp`: the MCP server on stdin/stdout, with this process's own container and (when
    WORKER_ENABLED) pipeline worker, acting with `api_key`'s scope. Logs go to stderr, stdout is the protocol's."""
    configure_logging(settings.log_level, settings.log_format)
    principal = stdio_principal(parse_api_keys(settings.api_keys), api_key)
    container = await build_container(settings)
    try:
        if settings.worker_enabled:
            worker = container.worker = Worker(container)
            await worker.start()
        await serve_stdio(container, principal, API_VERSION)
    finally:
        await close_container(container)
