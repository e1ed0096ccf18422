"""MCP over stdin/stdout (`lightrag-service mcp`), for an agent that starts the server itself. The process
acts with one key: the one given (`--api-key` / LIGHTRAG_API_KEY), held to its project scope; with no
API_KEYS configured, like the HTTP API, it may use every project."""

from __future__ import annotations

from app.container import Container
from app.core.errors import Unauthorized
from app.web.auth import ApiKey, Principal, match_key

from .calls import Local, Runtime
from .server import build_server


def stdio_principal(keys: list[ApiKey], presented: str | None) -> Principal:
    if not keys:
        return Principal(None)
    if not presented:
        raise Unauthorized("API_KEYS is set: give one of its keys with --api-key or LIGHTRAG_API_KEY")
    key = match_key(keys, presented)
    if key is None:
        raise Unauthorized("The API key is not one of API_KEYS")
    return Principal(key)


async def serve_stdio(container: Container, principal: Principal, version: str) -> None:
    runtime = Runtime(read_only=container.settings.mcp_read_only, local=Local(container, principal))
    await build_server(runtime, version).run_stdio_async()
