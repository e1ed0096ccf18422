"""Application factory and lifespan: database (embedded or DATABASE_URL), migrations, providers."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute

from app.auth import ALWAYS_OPEN_PATHS, DOCS_PATHS, ApiKeyMiddleware, ProjectScopedRoute, parse_api_keys
from app.config import Settings, get_settings
from app.container import Container
from app.db.engine import Database
from app.db.migrate import stored_embedding_dim, upgrade_to_head
from app.error_handlers import install_error_handlers
from app.logging_setup import configure_logging
from app.middleware import BodyLimitMiddleware, RequestContextMiddleware
from app.providers.embeddings import EmbeddingClient
from app.providers.llm import LLMClient
from app.providers.tokenizer import get_tokenizer
from app.repositories import projects as projects_repo
from app.routers import documents, entities, export, ops, projects, query
from app.services.projects import DEFAULT_PROJECT, DEFAULT_PROJECT_NAME
from app.services.query.rerank import get_reranker

log = logging.getLogger(__name__)

API_VERSION = "0.1.0"


async def build_container(settings: Settings) -> Container:
    db = Database.from_settings(settings.database_url, settings.data_dir, settings.db_pool_size)
    try:
        stored = await stored_embedding_dim(db)
        if stored is not None and stored != settings.embedding_dim:
            raise RuntimeError(
                f"EMBEDDING_DIM is {settings.embedding_dim} but the database was created with {stored}-d "
                "vectors; use the original dimension or a new database."
            )
        await upgrade_to_head(db, settings.embedding_dim)
        async with db.transaction() as conn:
            await projects_repo.ensure(conn, DEFAULT_PROJECT, DEFAULT_PROJECT_NAME)
    except BaseException:
        await db.close()
        raise
    tokenizer = get_tokenizer(settings.tokenizer_encoding)
    return Container(
        settings=settings,
        db=db,
        tokenizer=tokenizer,
        llm=LLMClient(settings, tokenizer),
        embedder=EmbeddingClient(settings, tokenizer),
    )


async def close_container(c: Container) -> None:
    await c.llm.close()
    await c.embedder.close()
    await c.db.close()


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        configure_logging(settings.log_level)
        container = await build_container(settings)
        app.state.container = container
        if not app.state.api_keys:
            log.warning("API_KEYS is empty: the API is open to anyone who can reach it. `python -m app` then "
                        "listens on 127.0.0.1 only; set API_KEYS before exposing it (HOST=0.0.0.0)")
        if not settings.llm_configured:
            log.warning("no LLM configured: ingestion and queries answer 503 until LLM_MODEL/LLM_BASE_URL are set")
        get_reranker(container.extras, settings)  # built now, so the breaker gauge is in /metrics from start
        if settings.worker_enabled:
            from app.worker import Worker  # noqa: PLC0415 (the worker imports this module's factory)

            container.extras["worker"] = Worker(container)
            await container.extras["worker"].start()
        try:
            yield
        finally:
            if "worker" in container.extras:
                await container.extras["worker"].stop()
            await container.extras["reranker"].close()
            await close_container(container)

    app = FastAPI(
        title="LightRAG Service",
        version=API_VERSION,
        description="Documents to a knowledge graph with an LLM, queried in six modes, on PostgreSQL + pgvector.",
        lifespan=lifespan,
    )
    app.router.route_class = ProjectScopedRoute  # routes added on the app itself are scope-checked too
    app.state.api_keys = parse_api_keys(settings.api_keys)
    install_error_handlers(app)
    open_paths = ALWAYS_OPEN_PATHS | (DOCS_PATHS if settings.public_docs else frozenset())
    # Added innermost first: request context, then authentication, then the body limit, then the app.
    app.add_middleware(BodyLimitMiddleware, max_body_bytes=settings.max_request_bytes)
    app.add_middleware(ApiKeyMiddleware, keys=app.state.api_keys, open_paths=open_paths)
    app.add_middleware(RequestContextMiddleware)
    for module in (projects, documents, query, entities, export, ops):
        app.include_router(module.router)
    _require_scoped_routes(app)
    return app


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
