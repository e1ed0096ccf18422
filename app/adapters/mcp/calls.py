"""One tool call: who calls (the HTTP request's API key, or the stdio process's), the project scope check,
the token usage it spends (counted as for a REST request, reported in the result's `_meta`), its metrics, the
answer cut to the token budget, and errors turned into tool errors the model can read and correct."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent
from pydantic import ValidationError

from app.container import Container
from app.core import metrics
from app.core.errors import AppError, Forbidden, ServiceUnavailable
from app.core.logging_setup import project_var
from app.core.usage import Usage, track_usage
from app.web.auth import ANONYMOUS, Principal

from .budget import dump, fit

log = logging.getLogger(__name__)

_NOTE_TOKENS = 16  # at most, a phrase of the truncation note ("kept 35 of 72 entities; ") and its key


@dataclass(frozen=True)
class Local:
    """The stdio server's single caller: one container and one key for the whole process."""

    container: Container
    principal: Principal


@dataclass(frozen=True)
class Runtime:
    read_only: bool
    local: Local | None = None  # None: served over HTTP, each request brings its app and its key


@dataclass
class Answer:
    """What a tool found, and which parts of it may be cut to the budget (dotted paths, see budget.fit)."""

    data: dict[str, Any]
    lists: Sequence[str] = ()
    texts: Sequence[str] = ()
    notes: list[str] = field(default_factory=list)  # cuts made before the budget (e.g. a node limit reached)
    after_cut: Callable[[dict[str, Any]], Sequence[str]] | None = None  # see budget.fit's `then`


def caller(runtime: Runtime, ctx: Context) -> tuple[Container, Principal]:
    """The container and key of this call. Over HTTP the API-key middleware already authenticated the request;
    a request it did not see gets no project at all (fails closed)."""
    request = ctx.request_context.request
    if runtime.local is not None and request is None:
        return runtime.local.container, runtime.local.principal
    app_state = getattr(getattr(request, "app", None), "state", None)
    container = getattr(app_state, "container", None)
    if container is None:
        raise ServiceUnavailable("The service is starting or stopping", code="not_ready")
    return container, getattr(request.state, "principal", None) or ANONYMOUS  # type: ignore[union-attr]


def check_project(principal: Principal, project_id: str) -> None:
    project_var.set(project_id)
    if not principal.allows(project_id):
        raise Forbidden(f"This API key may not access project '{project_id}'", code="project_forbidden")


async def run_tool(
    runtime: Runtime,
    ctx: Context,
    tool: str,
    project_id: str | None,
    max_tokens: int,
    work: Callable[[Container, Principal], Awaitable[Answer]],
) -> CallToolResult:
    """`project_id` None: a tool acting on no single project (it filters by the caller's scope itself)."""
    with track_usage() as usage:
        try:
            container, principal = caller(runtime, ctx)
            if project_id is not None:
                check_project(principal, project_id)
            answer = await work(container, principal)
        except AppError as exc:
            return _error(tool, f"{exc.detail} ({exc.code})", usage)
        except ValidationError as exc:  # arguments the service's request models refuse
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'input'}: {e['msg']}" for e in exc.errors())
            return _error(tool, f"Invalid arguments: {problems} (validation_error)", usage)
        count = container.tokenizer.count
        advice = f" (max_tokens={max_tokens}: ask with a larger budget or a narrower request for more)"
        answer.data["truncated"] = bool(answer.notes)  # counted in the budget, as the notes made before it
        if answer.notes:
            answer.data["truncation"] = "; ".join(answer.notes)
        paths = len(answer.lists) + len(answer.texts)
        cuts = fit(
            answer.data,
            max_tokens,
            count,
            container.tokenizer.truncate,
            lists=answer.lists,
            texts=answer.texts,
            then=answer.after_cut,
            note_room=count(advice) + _NOTE_TOKENS * (paths + 1),
        )
    notes = answer.notes + cuts
    answer.data["truncated"] = bool(notes)
    if notes:
        answer.data["truncation"] = "; ".join(notes) + (advice if cuts else "")
    metrics.MCP_TOOL_CALLS.labels(tool, "ok").inc()
    return CallToolResult(
        content=[TextContent(type="text", text=dump(answer.data))],
        structured_content=answer.data,
        _meta={"usage": usage_meta(usage)},
    )


def usage_meta(usage: Usage) -> dict[str, int]:
    """The figures a REST answer gives in X-Token-Input / X-Token-Output, plus the call counts."""
    return {
        "input_tokens": usage.prompt_tokens,
        "output_tokens": usage.completion_tokens,
        "llm_calls": usage.llm_calls,
        "embedding_tokens": usage.embedding_tokens,
    }


def _error(tool: str, message: str, usage: Usage) -> CallToolResult:
    metrics.MCP_TOOL_CALLS.labels(tool, "error").inc()
    log.info("MCP tool %s refused: %s", tool, message)
    return CallToolResult(
        content=[TextContent(type="text", text=message)], is_error=True, _meta={"usage": usage_meta(usage)}
    )
