"""The service in this process against a fake provider, driven through its own HTTP interface (no server, no
network): how the quality, alias and update benches start it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import httpx
from fastapi import FastAPI

from app.container import Container
from app.core.config import Settings
from app.db.engine import Database
from app.providers.llm import LLMClient
from app.providers.rerank_breaker import RerankService
from app.providers.tokenizer import get_tokenizer
from app.services.budget.fleet import FleetBudget
from app.services.cached_llm import CachedLLM
from app.services.query.service import QueryService


@asynccontextmanager
async def service_client(
    database_url: str, llm_url: str, dim: int, *, poll: float = 0.05, client_timeout: float = 3600, **settings: Any
) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    """The app (its lifespan run: migrations, container, in-process worker) and a client bound to it;
    `settings` override the service's settings."""
    from app.core.config import Settings
    from app.main import create_app

    app = create_app(
        Settings(
            _env_file=None,
            database_url=database_url,
            llm_base_url=llm_url,
            llm_model="fake-llm",
            llm_api_key="k",
            embedding_model="fake-embedding",
            embedding_dim=dim,
            worker_poll_interval=poll,
            log_level="WARNING",
            **settings,
        )
    )
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench", timeout=client_timeout) as client:
            yield app, client


async def ingest_one_at_a_time(client: httpx.AsyncClient, documents: Sequence[Any]) -> float:
    """Post each document (with `id` and `text`) alone and wait until the pipeline has processed it before the
    next, so resolution sees them in this order; the seconds it all took."""
    started = time.perf_counter()
    for done, d in enumerate(documents, start=1):
        body = {"documents": [{"text": d.text, "id": d.id, "file_path": f"{d.id}.txt"}]}
        response = await client.post("/documents", json=body)
        assert response.status_code in (200, 202), response.text
        while True:
            counts = (await client.get("/pipeline")).json()["by_status"]
            if counts.get("processed", 0) + counts.get("failed", 0) >= done:
                break
            await asyncio.sleep(0.02)
        assert counts.get("processed") == done, counts
    return time.perf_counter() - started


def query_service(settings: Settings, db: Database, embedder: Any) -> QueryService:
    """The query service over `db` with the given embedder (the benches' stand-ins for a provider), for timing
    retrieval in this process without the HTTP layer."""
    tokenizer = get_tokenizer()
    llm = LLMClient(settings, tokenizer)
    container = Container(
        settings,
        db,
        tokenizer,
        llm,
        embedder,
        llm_cache=CachedLLM(db, llm),
        reranker=RerankService(settings),
        budget=FleetBudget(settings, db),
    )
    return QueryService(container)
