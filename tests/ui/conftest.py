"""The web UI in a real browser: Chromium from the operating system's packages, driven by Playwright, against
the app served on a loopback port (embedded PostgreSQL, fake LLM) behind an API key."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
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


def ingested(server: LiveServer, project: str, text: str, file_path: str) -> None:
    """The project (made if need be) holding the text as a processed document, through the API with the key."""
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {API_KEY}"}, timeout=30) as http:
        assert http.post("/projects", json={"id": project}).status_code in (201, 409)
        answer = http.post(
            "/documents", json={"project_id": project, "documents": [{"text": text, "file_path": file_path}]}
        )
        document_id = answer.json()["documents"][0]["id"]
        deadline = time.monotonic() + 60
        while http.get(f"/documents/{document_id}", params={"project_id": project}).json()["status"] != "processed":
            assert time.monotonic() < deadline, "the document was not processed"
            time.sleep(0.1)


@contextmanager
def keyed_page(browser, url: str, timeout: int, *, accept_dialogs: bool = False) -> Iterator:  # noqa: ANN001
    """A page at `url` holding the API key, in a browser context of its own (1280 × 900); no page error may
    happen while it is open. `accept_dialogs`: every confirm() is answered yes."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(f"sessionStorage.setItem('lightrag.apiKey', '{API_KEY}');")
    page = context.new_page()
    page.set_default_timeout(timeout)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    if accept_dialogs:
        page.on("dialog", lambda d: d.accept())
    page.goto(url)
    yield page
    context.close()
    assert not errors, errors


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
