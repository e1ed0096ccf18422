"""The web UI in a real browser: Chromium from the operating system's packages, driven by Playwright, against
the app served on a loopback port (embedded PostgreSQL, fake LLM) behind an API key."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.config import Settings
from app.main import create_app
from tests.support.database import TEMPLATE_DB, TEST_DIM, PgCluster
from tests.support.fakes.openai_server import FakeOpenAI
from tests.support.live_server import LiveServer, serve_in_thread

API_KEY = "ui-test-key"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"


def chromium_path() -> str | None:
    """UI_CHROMIUM, else the Debian package's binary."""
    for candidate in (os.environ.get("UI_CHROMIUM"), "chromium", "chromium-browser"):
        if candidate and (found := shutil.which(candidate)):
            return found
    return None


@pytest.fixture(scope="module")
def ui_server(pg_cluster: PgCluster, fake_server: FakeOpenAI) -> Iterator[LiveServer]:
    name = f"ui_{os.getpid()}"
    pg_cluster.server.psql(f'CREATE DATABASE "{name}" TEMPLATE {TEMPLATE_DB}')
    app = create_app(Settings(
        _env_file=None, database_url=pg_cluster.url(name), llm_base_url=fake_server.url, llm_model="fake-llm",
        llm_api_key="k", llm_max_retries=0, embedding_model="fake-embedding", embedding_dim=TEST_DIM,
        worker_poll_interval=0.05, log_level="ERROR", api_keys=[API_KEY],
    ))
    server = serve_in_thread(app)
    yield server
    server.stop()
    pg_cluster.server.psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="module")
def browser() -> Iterator:  # noqa: ANN201 (playwright's Browser, imported lazily)
    executable = chromium_path()
    if executable is None:
        if os.environ.get("CI"):
            pytest.fail("no chromium found: `apt-get install -y chromium` (or set UI_CHROMIUM)")
        pytest.skip("no chromium found: `apt-get install -y chromium` (or set UI_CHROMIUM) to run the UI tests")
    try:
        from playwright import sync_api
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip("playwright is not installed: `make test` installs the dev extra")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--disable-gpu"])
        yield browser
        browser.close()


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
