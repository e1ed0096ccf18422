"""/docs and /redoc load from the service alone (no CDN), and their pages and files need no key; the API
description they show still does, unless PUBLIC_DOCS is set."""

from __future__ import annotations

import re

import httpx
import pytest

ADMIN = "docs-admin-key"


def _references(html: str) -> list[str]:
    return re.findall(r"""(?:src|href)=["']([^"']+)["']""", html)


@pytest.mark.parametrize("keys", [[ADMIN], []])
@pytest.mark.parametrize("page", ["/docs", "/redoc"])
async def test_docs_pages_reference_only_files_the_service_serves_without_a_key(make_settings, start_app, page, keys):
    app = await start_app(make_settings(api_keys=keys, worker_enabled=False))
    answer = await app.http.get(page)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/html"), answer.text
    references = _references(answer.text)
    assert len(references) >= 3, answer.text  # the library, the page's own script and style
    for url in references:
        assert url.startswith("/") and not url.startswith("//"), f"{page} loads {url} from elsewhere"
        served = await app.http.get(url)
        assert served.status_code == 200 and served.content, url
    assert "/openapi.json" in answer.text
    assert (await app.http.head(page)).status_code == 200


async def test_the_api_description_needs_a_key_unless_public(make_settings, start_app):
    closed = await start_app(make_settings(api_keys=[ADMIN], worker_enabled=False))
    assert (await closed.http.get("/openapi.json")).status_code == 401
    assert (await closed.http.get("/openapi.json", headers={"X-API-Key": ADMIN})).status_code == 200
    assert (await closed.http.post("/docs/assets/api-docs.js")).status_code == 401  # only reading files is open
    public = await start_app(make_settings(api_keys=[ADMIN], public_docs=True, worker_enabled=False))
    assert (await public.http.get("/openapi.json")).status_code == 200
    assert (await public.http.get("/documents")).status_code == 401


async def test_docs_pages_behind_a_path_prefix_load_their_files_under_it(make_settings, start_app):
    app = await start_app(make_settings(worker_enabled=False))
    transport = httpx.ASGITransport(app=app.app, root_path="/rag")
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        answer = await http.get("/docs")
    assert 'data-spec="/rag/openapi.json"' in answer.text
    assert all(url.startswith("/rag/docs/assets/") for url in _references(answer.text)), answer.text
