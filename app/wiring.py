"""Building and closing the Container: database (embedded or DATABASE_URL), migrations, providers, and the
shared collaborators. Used by the API's lifespan (app/main.py) and the standalone worker (app/worker/queue.py)."""

from __future__ import annotations

import logging

from app.container import Container
from app.core.config import Settings
from app.core.startup import dimension_mismatch
from app.db.engine import Database, async_url
from app.db.migrate import resize_empty_vectors, stored_embedding_dim, upgrade_to_head
from app.db.replicas import ReadRouter
from app.providers.embeddings import EmbeddingClient
from app.providers.llm import LLMClient
from app.providers.rerank_breaker import RerankService
from app.providers.tokenizer import get_tokenizer
from app.repositories import projects as projects_repo
from app.services.budget.fleet import FleetBudget
from app.services.cached_llm import CachedLLM
from app.services.projects import DEFAULT_PROJECT, DEFAULT_PROJECT_NAME

log = logging.getLogger(__name__)


def read_router(settings: Settings) -> ReadRouter | None:
    """The replicas of DATABASE_READ_URL, or None (every read on the primary)."""
    if not settings.database_read_url:
        return None
    return ReadRouter.build(
        [async_url(url) for url in settings.database_read_url],
        pool_size=settings.db_pool_size,
        max_wait_ms=settings.database_read_max_wait_ms,
        max_lag_ms=settings.database_read_max_lag_ms,
        retry_s=settings.database_read_retry_seconds,
    )


async def build_container(settings: Settings, database: Database | None = None) -> Container:
    """`database`, when given, stays its caller's: the container uses it and leaves it open when closed."""
    db = database or Database.from_settings(
        settings.database_url, settings.data_dir, settings.db_pool_size, read_router(settings)
    )
    try:
        stored = await stored_embedding_dim(db)
        if stored is not None and stored != settings.embedding_dim:
            if not await resize_empty_vectors(db, settings.embedding_dim):
                raise dimension_mismatch(settings, stored)
            log.warning(
                "EMBEDDING_DIM is %d: the database held no vectors yet, so its %d-dimensional vector columns were "
                "resized",
                settings.embedding_dim,
                stored,
            )
        await upgrade_to_head(db, settings.embedding_dim)
        async with db.transaction() as conn:
            await projects_repo.ensure(conn, DEFAULT_PROJECT, DEFAULT_PROJECT_NAME)
        if db.replicas is not None:  # replicas serve reads only once they hold this schema and the default project
            db.replicas.schema_floor = await db.primary_position()
    except BaseException:
        if database is None:
            await db.close()
        raise
    tokenizer = get_tokenizer(settings.tokenizer_encoding)
    budget = FleetBudget(settings, db)
    budget.start()
    llm = LLMClient(settings, tokenizer, budget.gate("chat"))
    return Container(
        settings=settings,
        db=db,
        tokenizer=tokenizer,
        llm=llm,
        embedder=EmbeddingClient(settings, tokenizer, budget.gate("embeddings")),
        llm_cache=CachedLLM(db, llm),
        reranker=RerankService(
            settings, budget=budget.gate("rerank")
        ),  # built now, so its breaker gauge is in /metrics from the start
        budget=budget,
        owns_db=database is None,
    )


async def close_container(c: Container) -> None:
    """Stop the worker (it gives its claims back through the database), then close every client."""
    if c.worker is not None:
        await c.worker.stop()
        c.worker = None
    await c.pipeline_hub.close()
    await c.reranker.close()
    await c.llm.close()
    await c.embedder.close()
    await c.budget.close()
    if c.owns_db:
        await c.db.close()
