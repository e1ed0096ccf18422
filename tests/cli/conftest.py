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
from tests.support.database import PgCluster
from tests.support.fakes.openai_server import FakeOpenAI
from tests.support.live_server import live_app

API_KEY = "cli-test-key"
_projects = itertools.count()


@dataclass
class LiveService:
    url: str

    def http(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {API_KEY}"}, timeout=30)

    def run(
        self, *args: str, project: str = "default", api_key: str = API_KEY, url: str | None = None, columns: int = 300
    ) -> Result:
        env = {
            "LIGHTRAG_URL": url or self.url,
            "LIGHTRAG_API_KEY": api_key,
            "LIGHTRAG_PROJECT": project,
            "LIGHTRAG_TIMEOUT": "60",
            "COLUMNS": str(columns),
        }
        return CliRunner().invoke(cli, list(args), env=env)


@pytest.fixture(scope="package")
def live_service(pg_cluster: PgCluster, fake_server: FakeOpenAI) -> Iterator[LiveService]:
    with live_app(pg_cluster, fake_server, f"cli_{os.getpid()}", api_keys=[API_KEY]) as server:
        yield LiveService(server.url)


@pytest.fixture
def project(live_service: LiveService) -> str:
    """A fresh, empty project of the live service."""
    project_id = f"cli-{next(_projects)}"
    with live_service.http() as http:
        http.post("/projects", json={"id": project_id}).raise_for_status()
    return project_id


def assert_ok(result: Result) -> None:
    assert result.exit_code == 0, f"exit {result.exit_code}\n{result.output}\n{result.exception!r}"
