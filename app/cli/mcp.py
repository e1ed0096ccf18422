"""`mcp`: the Model Context Protocol server on stdin/stdout, for an agent that starts it as a subprocess."""

from __future__ import annotations

import asyncio

import typer

from app.cli.errors import CliError


def mcp(ctx: typer.Context) -> None:
    """Serve MCP over stdio against the configured database (settings from the environment and .env, as
    `serve`); --api-key (LIGHTRAG_API_KEY) must be one of API_KEYS when those are set, and scopes the tools."""
    from app.core.config import settings_or_exit
    from app.core.errors import AppError
    from app.main import serve_mcp_stdio

    settings = settings_or_exit(needs_database=True)
    try:
        asyncio.run(serve_mcp_stdio(settings, ctx.obj.api_key))
    except AppError as exc:
        raise CliError(exc.detail, exit_code=2) from None
    except KeyboardInterrupt:
        pass
