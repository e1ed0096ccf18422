"""The web UI in a real browser: Chromium from the operating system's packages, driven by Playwright, against
the app served on a loopback port (embedded PostgreSQL, fake LLM) behind an API key."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.database import PgCluster
from tests.support.fakes.openai_server import FakeOpenAI
from tests.support.live_server import LiveServer, live_app

API_KEY = "ui-test-key"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
EXPECT_TIMEOUT = 30_000  # ms


def chromium_path() -> str | None:
    """UI_CHROMIUM, else the Debian package's binary."""
    for candidate in (os.environ.get("UI_CHROMIUM"), "chromium", "chromium-browser"):
        if candidate and (found := shutil.which(candidate)):
            return found
    return None


@pytest.fixture(scope="module")
def ui_server(pg_cluster: PgCluster, fake_server: FakeOpenAI) -> Iterator[LiveServer]:
    with live_app(pg_cluster, fake_server, f"ui_{os.getpid()}", api_keys=[API_KEY]) as server:
        yield server


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
    # expect() waits 5 s by default, whatever page.set_default_timeout says: too short for a loaded CI machine
    sync_api.expect.set_options(timeout=EXPECT_TIMEOUT)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--disable-gpu"])
        yield browser
        browser.close()


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
