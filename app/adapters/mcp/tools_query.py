"""`query` (an answer with its references) and `retrieve_context` (the context only, for agents that answer
themselves): QueryService, as POST /query runs it."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from app.container import Container
from app.schemas.query import QueryMode, QueryRequest
from app.services.query.service import QueryService
from app.web.auth import Principal

from .calls import Answer, Runtime, run_tool
from .params import Budget, ProjectId

Question = Annotated[str, Field(min_length=1, max_length=100_000, description="The question, in natural language.")]
Mode = Annotated[
    QueryMode,
    Field(
        description="mix (graph + text chunks, the default), local (entities), global (relations), hybrid "
        "(local + global), naive (text chunks only), bypass (no retrieval)."
    ),
]
TopK = Annotated[int, Field(ge=1, le=1000, description="Entities (local) / relations (global) retrieved.")]
ChunkTopK = Annotated[int, Field(ge=1, le=1000, description="Text chunks retrieved.")]
ContextTokens = Annotated[
    int, Field(ge=1000, le=1_000_000, description="Most tokens of context the service gathers to answer from.")
]
_READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)


def _request(project_id: str, question: str, mode: str, top_k: int, chunk_top_k: int, **extra: object) -> QueryRequest:
    """The native query request a tool's arguments make (validated as the REST API validates it)."""
    fields = {"project_id": project_id, "query": question, "mode": mode, "top_k": top_k, "chunk_top_k": chunk_top_k}
    return QueryRequest.model_validate({**fields, **extra})


def register(server: MCPServer, runtime: Runtime) -> None:
    @server.tool(
        name="query",
        description="Answer a question from the project's knowledge graph and documents; returns the answer "
        "and the documents it cites (references).",
        annotations=_READS,
    )
    async def query(
        ctx: Context,
        question: Question,
        project_id: ProjectId = "default",
        mode: Mode = "mix",
        top_k: TopK = 40,
        chunk_top_k: ChunkTopK = 20,
        context_tokens: ContextTokens = 30_000,
        max_tokens: Budget = 4000,
    ) -> CallToolResult:
        async def work(c: Container, _: Principal) -> Answer:
            request = _request(project_id, question, mode, top_k, chunk_top_k, max_total_tokens=context_tokens)
            result = await QueryService(c).query(request)
            data = {
                "answer": result.response,
                "mode": result.mode,
                "references": [r.model_dump(mode="json") for r in result.references],
            }
            return Answer(data, lists=["references"], texts=["answer"])

        return await run_tool(runtime, ctx, "query", project_id, max_tokens, work)

    @server.tool(
        name="retrieve_context",
        description="Retrieve what the knowledge graph knows about a question (entities, relations, text chunks "
        "with their documents) without answering it.",
        annotations=_READS,
    )
    async def retrieve_context(
        ctx: Context,
        question: Question,
        project_id: ProjectId = "default",
        mode: Mode = "mix",
        top_k: TopK = 40,
        chunk_top_k: ChunkTopK = 20,
        max_tokens: Budget = 8000,
    ) -> CallToolResult:
        async def work(c: Container, _: Principal) -> Answer:
            request = _request(project_id, question, mode, top_k, chunk_top_k, only_need_context=True)
            result = await QueryService(c).query(request)
            data = {
                "keywords": result.keywords.model_dump(),
                "entities": [e.model_dump(mode="json") for e in result.context.entities],
                "relations": [r.model_dump(mode="json") for r in result.context.relations],
                "chunks": [k.model_dump(mode="json") for k in result.context.chunks],
                "references": [r.model_dump(mode="json") for r in result.references],
            }
            return Answer(data, lists=["chunks", "relations", "entities"])

        return await run_tool(runtime, ctx, "retrieve_context", project_id, max_tokens, work)
