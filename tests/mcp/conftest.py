"""The MCP server driven by the SDK's own client over streamable HTTP: in process (httpx2's ASGI transport into
the app, which runs its lifespan) unless a test needs a real server on loopback."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

ADMIN_KEY = "mcp-admin-key"
ALPHA_KEY = "mcp-alpha-key"  # scoped to project alpha
API_KEYS = [ADMIN_KEY, f"{ALPHA_KEY}:alpha"]

TEXT = "Carol Hale visited Rome. Rome is in Italy. Dario Venn founded Orbis Labs in Milan."


@asynccontextmanager
async def mcp_client(app: Any, key: str | None = ADMIN_KEY, url: str = "http://test") -> AsyncIterator[Client]:
    """The SDK's client over streamable HTTP to the app (`app` None: to the server at `url`)."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    transport = httpx2.ASGITransport(app=app) if app is not None else None
    http = httpx2.AsyncClient(transport=transport, base_url=url, headers=headers, timeout=60)
    async with http, Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
        yield client


def payload(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    text = result.content[0].text  # type: ignore[union-attr]
    assert json.loads(text) == result.structured_content  # the same answer for clients reading either
    return result.structured_content


def error_text(result: CallToolResult) -> str:
    assert result.is_error
    return result.content[0].text  # type: ignore[union-attr]


@pytest.fixture
async def seeded(start_app: Callable[..., Any], make_settings: Callable[..., Any]) -> Any:
    """An app behind API keys with projects alpha (one processed document) and beta (empty)."""
    app_client = await start_app(make_settings(api_keys=API_KEYS))
    http = app_client.http
    http.headers["Authorization"] = f"Bearer {ADMIN_KEY}"
    for project in ("alpha", "beta"):
        (await http.post("/projects", json={"id": project})).raise_for_status()
    body = {"project_id": "alpha", "documents": [{"text": TEXT, "id": "doc-1", "file_path": "notes.txt"}], "wait": True}
    response = await http.post("/documents", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["documents"][0]["status"] == "processed"
    return app_client
