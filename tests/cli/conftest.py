"""The CLI against the real app served on a loopback port (embedded PostgreSQL, fake LLM), behind an API key."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from typer.testing import CliRunner, Result

from app.cli.main import cli
from app.config import Settings
from app.main import create_app
from tests.support.database import TEMPLATE_DB, TEST_DIM, PgCluster
from tests.support.fakes.openai_server import FakeOpenAI
from tests.support.live_server import serve_in_thread

API_KEY = "cli-test-key"
_projects = itertools.count()


@dataclass
class LiveService:
    url: str

    def http(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {API_KEY}"}, timeout=30)

    def run(self, *args: str, project: str = "default", api_key: str = API_KEY, url: str | None = None) -> Result:
        env = {"LIGHTRAG_URL": url or self.url, "LIGHTRAG_API_KEY": api_key, "LIGHTRAG_PROJECT": project,
               "LIGHTRAG_TIMEOUT": "60", "COLUMNS": "300"}
        return CliRunner().invoke(cli, list(args), env=env)


@pytest.fixture(scope="package")
def live_service(pg_cluster: PgCluster, fake_server: FakeOpenAI) -> Iterator[LiveService]:
    name = f"cli_{os.getpid()}"
    pg_cluster.server.psql(f'CREATE DATABASE "{name}" TEMPLATE {TEMPLATE_DB}')
    app = create_app(Settings(
        _env_file=None, database_url=pg_cluster.url(name), llm_base_url=fake_server.url, llm_model="fake-llm",
        llm_api_key="k", llm_max_retries=0, embedding_model="fake-embedding", embedding_dim=TEST_DIM,
        worker_poll_interval=0.05, log_level="ERROR", api_keys=[API_KEY],
    ))
    server = serve_in_thread(app)
    yield LiveService(server.url)
    server.stop()
    pg_cluster.server.psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def project(live_service: LiveService) -> str:
    """A fresh, empty project of the live service."""
    project_id = f"cli-{next(_projects)}"
    with live_service.http() as http:
        http.post("/projects", json={"id": project_id}).raise_for_status()
    return project_id


def assert_ok(result: Result) -> None:
    assert result.exit_code == 0, f"exit {result.exit_code}\n{result.output}\n{result.exception!r}"
