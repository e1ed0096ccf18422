"""/mcp: the streamable-HTTP transport, mounted outside the OpenAPI schema by app/main.py.

Stateless: each POST carries its own MCP exchange (progress notifications ride its event stream), so no
session lives in a process and any replica answers any request, as with the REST API. The API-key middleware
has authenticated the request before it gets here; each tool call reads that key from the request."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cache

from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Receive, Scope, Send

from app.web.middleware import send_error

from .calls import Runtime
from .server import build_server


@cache
def _shared_server(read_only: bool, version: str) -> MCPServer:
    """One server per process and mode, shared by every app built here (building its tool schemas takes
    ~0.1 s, and tests build hundreds of apps): over HTTP a call takes its container and key from its request,
    so the server holds nothing per app; each app runs its own session manager."""
    return build_server(Runtime(read_only=read_only), version)


class McpEndpoint:
    """The ASGI app at /mcp; it answers while `running()` (the app's lifespan) is entered."""

    def __init__(self, *, read_only: bool, version: str) -> None:
        self.read_only = read_only
        self.version = version
        self._manager: StreamableHTTPSessionManager | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        server = _shared_server(self.read_only, self.version)
        # Hosts and origins are not pinned here: API keys guard /mcp as they guard the REST API, and browsers
        # are held by CORS_ORIGINS like everywhere else on the service.
        server.streamable_http_app(
            stateless_http=True,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        manager = server.session_manager  # this app's own: streamable_http_app() just made it
        started, stopping = asyncio.Event(), asyncio.Event()

        async def serve() -> None:
            # The manager's task group is entered and left by this one task, whichever tasks enter and leave
            # the app's lifespan (a test harness may use two).
            async with manager.run():
                self._manager = manager
                started.set()
                await stopping.wait()

        task = asyncio.create_task(serve(), name="mcp-session-manager")
        waiting = asyncio.ensure_future(started.wait())
        await asyncio.wait((task, waiting), return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        if task.done():
            task.result()  # it failed to start: raise why
        try:
            yield
        finally:
            self._manager = None
            stopping.set()
            await task

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._manager is None:
            await send_error(send, 503, "The MCP server is not running", "not_ready")
            return
        await self._manager.handle_request(scope, receive, send)
