"""Shared fixtures: one embedded PostgreSQL per test process (each xdist worker has its own), a database per
test equal to a migrated template, the fake OpenAI-compatible server, and an app + HTTP client wired to both.
The helpers they use live in tests/support/."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx
import openai
import pytest
from fastapi import FastAPI

from app.core.config import ENV_FILE_VARIABLE, Settings
from app.db.engine import Database
from app.main import create_app
from tests.support.database import TEST_DIM, DatabasePool, PgCluster, running_cluster
from tests.support.fakes.openai_server import FakeOpenAI
from tests.support.ssl_context import shared_default_ssl_context
from tests.support.tempdirs import ProcessTemp

_process_temp = ProcessTemp()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` (the default in pyproject.toml): one test process per core, and one more. Each process waits
    for part of its time (fake providers' latency, keep-alive intervals, "still open after 0.5 s" checks), and
    the extra one runs meanwhile: on 2 cores the full suite went from 115 to 99 s, the fast set from 66 to 59 s."""
    return len(os.sched_getaffinity(0)) + 1


def pytest_configure(config: pytest.Config) -> None:
    """Every temporary file of this process goes to a folder of its own, removed at the end; the main process
    first removes what killed runs left (tests/support/tempdirs.py)."""
    _process_temp.enter(main=not hasattr(config, "workerinput"))


def pytest_unconfigure(config: pytest.Config) -> None:
    _process_temp.leave()


@pytest.fixture(scope="session", autouse=True)
def _no_developer_settings() -> Iterator[None]:
    """Hermetic tests: no developer's `.env` (ENV_FILE= makes every entry point read none, in this process and
    in the servers and workers it starts) and none of the service's variables exported in their shell. A test
    that wants a setting passes it explicitly."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV_FILE_VARIABLE, "")
        for name in Settings.model_fields:
            patch.delenv(name.upper(), raising=False)
        yield


@pytest.fixture(scope="session", autouse=True)
def _one_ssl_context_per_process() -> Iterator[None]:
    with shared_default_ssl_context():
        yield


@pytest.fixture(scope="session", autouse=True)
def _short_provider_retry_backoff() -> Iterator[None]:
    """The openai SDK waits ~0.5 s, then ~1 s, ... before retrying a failed call; the tests that make a fake
    provider fail would spend most of their time in that wait. The retries still happen, only sooner."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(openai._base_client, "INITIAL_RETRY_DELAY", 0.05)
        yield


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    with running_cluster() as cluster:
        yield cluster


@pytest.fixture(scope="session")
async def database_pool(pg_cluster: PgCluster) -> AsyncIterator[DatabasePool]:
    pool = DatabasePool(pg_cluster)
    await pool.load_template()
    yield pool
    await pool.close()  # its admin sessions belong to the session's event loop: closed while it runs


@pytest.fixture
async def database_url(database_pool: DatabasePool) -> AsyncIterator[str]:
    """A database equal to the template, for this test alone."""
    url = await database_pool.acquire()
    yield url
    await database_pool.release(url)


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
async def start_app(database_url: str, database_pool: DatabasePool) -> AsyncIterator[Callable[..., Any]]:
    """`await start_app(settings)` → AppClient; everything started is shut down after the test, before its
    database is reset (requesting `database_url` here orders the teardowns). An app on the test's database
    gets that database's kept engine when no other running app has it (tests/support/warm_databases.py)."""
    warm = database_pool.warm
    stack: list[tuple[Any, httpx.AsyncClient, Database | None]] = []

    async def _start(settings: Settings, setup: Callable[[FastAPI], None] | None = None) -> AppClient:
        on_test_database = settings.database_url == database_url
        database = warm.lend(database_url, settings.db_pool_size) if on_test_database else None
        app = create_app(settings, database)
        if setup is not None:
            setup(app)
        lifespan = app.router.lifespan_context(app)
        try:
            await lifespan.__aenter__()
        except BaseException:
            if database is not None:
                await warm.give_back(database)
            raise
        client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test", timeout=60)
        stack.append((lifespan, client, database))
        return AppClient(app, client)

    yield _start
    for lifespan, client, database in reversed(stack):
        await client.aclose()
        await lifespan.__aexit__(None, None, None)
        if database is not None:
            await warm.give_back(database)


@pytest.fixture
async def app_client(start_app: Callable[..., Any], settings: Settings) -> AppClient:
    return await start_app(settings)


@pytest.fixture
def client(app_client: AppClient) -> httpx.AsyncClient:
    return app_client.http
