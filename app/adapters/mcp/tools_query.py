"""`query` (an answer with the documents it cites and its claims, each with the passages that support it) and
`retrieve_context` (the context only, for agents that answer themselves): QueryService, as POST /query runs
it."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from app.container import Container
from app.domain.chunk_echoes import ShownText, unechoed
from app.domain.citation_text import cited_references
from app.schemas.query import QueryMode, QueryRequest, QueryResponse
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


def _answer(result: QueryResponse) -> dict[str, Any]:
    """The answer, the references it cites (its [n] markers name them) and its claims, each with its support
    verdict and the passages that support it quoted, so an agent can check them without reading chunks."""
    content = {c.id: c.content for c in result.context.chunks}
    reference_of = {r.document_id: r.reference_id for r in result.references}
    claims = [
        {
            "text": claim.text,
            "support": claim.support,
            "sources": [
                {
                    "reference_id": reference_of.get(cited.document_id),
                    "document_id": cited.document_id,
                    "file_path": cited.file_path,
                    "chunk_id": cited.chunk_id,
                    "quote": content.get(cited.chunk_id, "")[cited.start : cited.end],
                }
                for cited in claim.citations
            ],
        }
        for claim in result.claims
    ]
    return {
        "answer": result.response,
        "mode": result.mode,
        "references": cited_references(result.model_dump(mode="json", include={"response", "references", "claims"})),
        "claims": claims,
    }


class _Echoes:
    """retrieve_context's graph descriptions without the sentences the result's chunks already hold (as the
    answer prompt has them): trimmed against every chunk while the result is cut to its budget, then, against
    the chunks the cut kept, made again from the whole descriptions (what a cut chunk said comes back), the
    graph cut further if that went over; and the references of the kept chunks only."""

    KINDS = ("entities", "relations")

    def __init__(self, data: dict[str, Any]) -> None:
        self.whole = {kind: [item["description"] for item in data[kind]] for kind in self.KINDS}
        self.after_cut(data)

    def after_cut(self, data: dict[str, Any]) -> list[str]:
        shown = ShownText(contents={c["id"]: c["content"] for c in data["chunks"]})
        for kind in self.KINDS:
            for item, whole in zip(data[kind], self.whole[kind], strict=False):  # a cut keeps a list's head
                item["description"] = unechoed(whole, item["source_chunk_ids"], shown)
        kept = {c["reference_id"] for c in data["chunks"]}
        data["references"] = [r for r in data["references"] if r["reference_id"] in kept]
        return ["relations", "entities"] if data["relations"] or data["entities"] else ["chunks"]


def register(server: MCPServer, runtime: Runtime) -> None:
    @server.tool(
        name="query",
        description="Answer a question from the project's knowledge graph and documents; returns the answer, "
        "the documents it cites (references) and its claims with the passages that support them.",
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
            return Answer(_answer(result), lists=["claims", "references"], texts=["answer"])

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
            result = await QueryService(c, whole_descriptions=True).query(request)
            data = {
                "keywords": result.keywords.model_dump(),
                "entities": [e.model_dump(mode="json") for e in result.context.entities],
                "relations": [r.model_dump(mode="json") for r in result.context.relations],
                "chunks": [k.model_dump(mode="json") for k in result.context.chunks],
                "references": [r.model_dump(mode="json") for r in result.references],
            }
            echoes = _Echoes(data)
            return Answer(data, lists=["chunks", "relations", "entities"], after_cut=echoes.after_cut)

        return await run_tool(runtime, ctx, "retrieve_context", project_id, max_tokens, work)
