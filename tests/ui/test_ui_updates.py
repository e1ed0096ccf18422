"""Re-uploading a changed file from the web UI updates its document (a new version, one row) when the user
asks for it, and the row shows the version."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.live_server import LiveServer
from tests.ui.conftest import API_KEY

pytestmark = pytest.mark.slow

TIMEOUT = 60_000
FIRST = "Nadia Petrov directs the Harbor Lab in Oslo. Nadia Petrov hired Tomas Berg.\n"
SECOND = "Nadia Petrov directs the Harbor Lab in Bergen. Nadia Petrov hired Tomas Berg.\n"


@pytest.fixture
def page(ui_server: LiveServer, browser) -> Iterator:  # noqa: ANN001
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(f"sessionStorage.setItem('lightrag.apiKey', '{API_KEY}');")
    page = context.new_page()
    page.set_default_timeout(TIMEOUT)
    yield page
    context.close()


def test_a_changed_file_uploaded_again_updates_its_document(
    ui_server: LiveServer, page, artifacts: Path, tmp_path: Path
) -> None:  # noqa: ANN001
    from playwright.sync_api import expect

    page.goto(ui_server.url + "/ui/#/documents")
    expect(page.locator("#project-select")).to_have_value("default")
    file = tmp_path / "harbor-lab.md"
    file.write_text(FIRST)
    page.set_input_files("#file-input", str(file))
    row = page.locator("#doc-table tbody tr", has_text="harbor-lab.md")
    expect(row).to_have_attribute("data-status", "processed", timeout=TIMEOUT)
    expect(row).not_to_contain_text("v2")

    file.write_text(SECOND)
    page.check("#upload-update")
    page.set_input_files("#file-input", str(file))
    expect(page.locator("#upload-result")).to_contain_text("new version", timeout=TIMEOUT)
    expect(row).to_contain_text("v2", timeout=TIMEOUT)
    expect(row).to_have_attribute("data-status", "processed", timeout=TIMEOUT)
    expect(page.locator("#doc-table tbody tr", has_text="harbor-lab.md")).to_have_count(1)
    page.screenshot(path=str(artifacts / "document-update.png"), full_page=True)
