"""/docs and /redoc in Chromium behind an API key, loading nothing from elsewhere: the page asks for a key,
shows the API with it, and "Try it out" calls send it."""

from __future__ import annotations

import json

import pytest

from tests.support.live_server import LiveServer
from tests.ui.conftest import API_KEY

pytestmark = pytest.mark.slow
TIMEOUT = 30_000


def _page(browser, server: LiveServer):  # noqa: ANN001, ANN202 (playwright objects, imported lazily)
    """A page that is offline but for the service: every request elsewhere is refused and listed."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT)
    elsewhere, errors = [], []

    def offline(route) -> None:  # noqa: ANN001
        if route.request.url.startswith(server.url):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    page.route("**/*", offline)
    page.on("pageerror", lambda e: errors.append(str(e)))
    return context, page, elsewhere, errors


def _enter_key(page) -> None:  # noqa: ANN001
    from playwright.sync_api import expect

    expect(page.locator("#key-form")).to_be_visible(timeout=TIMEOUT)
    page.fill("#key-input", API_KEY)
    page.click("#key-form button[type=submit]")
    expect(page.locator("#key-form")).to_be_hidden(timeout=TIMEOUT)


def test_swagger_ui_asks_for_a_key_and_tries_calls_with_it(ui_server: LiveServer, browser) -> None:  # noqa: ANN001
    from playwright.sync_api import expect

    context, page, elsewhere, errors = _page(browser, ui_server)
    page.goto(ui_server.url + "/docs")
    _enter_key(page)
    operation = page.locator("#operations-projects-listProjects")
    expect(operation).to_be_visible(timeout=TIMEOUT)
    operation.locator(".opblock-summary").click()
    page.locator(".try-out__btn").first.click()
    with page.expect_response(lambda r: r.url.startswith(ui_server.url + "/projects")) as called:
        page.locator(".execute").first.click()
    assert called.value.status == 200 and called.value.request.headers.get("authorization") == f"Bearer {API_KEY}"
    assert "default" in json.dumps(called.value.json())
    assert elsewhere == [] and errors == []
    context.close()


def test_redoc_shows_the_api_after_the_key(ui_server: LiveServer, browser) -> None:  # noqa: ANN001
    from playwright.sync_api import expect

    context, page, elsewhere, errors = _page(browser, ui_server)
    page.goto(ui_server.url + "/redoc")
    _enter_key(page)
    expect(page.locator("#redoc h1").first).to_contain_text("LightRAG Service", timeout=TIMEOUT)
    expect(page.locator("#redoc").get_by_text("List Projects").first).to_be_attached(timeout=TIMEOUT)
    # ReDoc's "API docs by Redocly" footer links its logo from its CDN (the page's CSP blocks it): nothing else
    assert {url.rsplit("/", 1)[-1] for url in elsewhere} <= {"logo-mini.svg"} and errors == []
    context.close()
