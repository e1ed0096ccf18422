"""Projects, documents and entities addressable by URI, for a client to attach to a conversation, and the
`list_projects` tool that names the projects a key may use. Same services and scope check as the tools."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.types import CallToolResult, ToolAnnotations

from app.container import Container
from app.core.errors import AppError
from app.services.graph.entities import CurationService
from app.services.ingest.intake import IngestionService
from app.services.projects import ProjectService
from app.web.auth import Principal

from .calls import Answer, Runtime, caller, check_project, run_tool
from .params import Budget
from .tools_documents import status_of

PROJECT_URI = "lightrag://projects/{project_id}"
DOCUMENT_URI = "lightrag://projects/{project_id}/documents/{document_id}"
ENTITY_URI = "lightrag://projects/{project_id}/entities/{name}"
RELATIONS_SHOWN = 100


def _project_summary(project: Any) -> dict[str, Any]:
    return {
        "id": project.id,
        "name": project.name,
        "counts": project.counts.model_dump(),
        "uri": PROJECT_URI.format(project_id=project.id),
    }


def register(server: MCPServer, runtime: Runtime) -> None:
    async def read(ctx: Context, project_id: str, load: Callable[[Container], Awaitable[Any]]) -> str:
        try:
            container, principal = caller(runtime, ctx)
            check_project(principal, project_id)
            return json.dumps(await load(container), ensure_ascii=False, default=str)
        except AppError as exc:
            raise ResourceError(f"{exc.detail} ({exc.code})") from None

    @server.resource(
        PROJECT_URI,
        name="project",
        description="A project: its name, counts and settings.",
        mime_type="application/json",
    )
    async def project(project_id: str, ctx: Context) -> str:
        async def load(c: Container) -> Any:
            return (await ProjectService(c).get(project_id)).model_dump(mode="json")

        return await read(ctx, project_id, load)

    @server.resource(
        DOCUMENT_URI,
        name="document",
        description="A document: its status, and its text as the chunks it was split into.",
        mime_type="application/json",
    )
    async def document(project_id: str, document_id: str, ctx: Context) -> str:
        async def load(c: Container) -> Any:
            service = IngestionService(c)
            doc = status_of(await service.get(project_id, document_id))
            doc["chunks"] = [k.content for k in (await service.chunks(project_id, document_id)).chunks]
            return doc

        return await read(ctx, project_id, load)

    @server.resource(
        ENTITY_URI,
        name="entity",
        description="An entity: its description, aliases, sources and relations.",
        mime_type="application/json",
    )
    async def entity(project_id: str, name: str, ctx: Context) -> str:
        async def load(c: Container) -> Any:
            detail = await CurationService(c).get_entity(project_id, name, RELATIONS_SHOWN)
            return detail.model_dump(mode="json", exclude={"source_ids"})

        return await read(ctx, project_id, load)

    @server.tool(
        name="list_projects",
        description="The projects (separate knowledge bases) this key may use, with their document and entity "
        "counts; every other tool takes one as project_id.",
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
    async def list_projects(ctx: Context, max_tokens: Budget = 2000) -> CallToolResult:
        async def work(c: Container, principal: Principal) -> Answer:
            projects = await ProjectService(c).list(principal.allowed_projects)
            return Answer({"projects": [_project_summary(p) for p in projects]}, lists=["projects"])

        return await run_tool(runtime, ctx, "list_projects", None, max_tokens, work)
