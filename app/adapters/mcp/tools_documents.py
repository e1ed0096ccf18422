"""Documents: `list_documents`, `get_document_chunks`, `document_status`, and the one write tool,
`ingest_text` (left out when MCP_READ_ONLY is set). IngestionService and DocumentUpdates, as the /documents
routes use them: other text under an existing document's id updates it."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from app.container import Container
from app.schemas.documents import DocumentOut, DocumentStatus
from app.services.ingest.intake import TERMINAL, WAIT_LIMIT_SECONDS, IngestionService, Submission
from app.services.ingest.updates import DocumentUpdates
from app.web.auth import Principal

from .calls import Answer, Runtime, run_tool
from .params import Budget, DocumentId, ProjectId

_READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)
_STATUS_FIELDS = {"id", "status", "error", "stage", "progress", "file_path", "chunks_count", "entities_count"}
_STATUS_FIELDS |= {"relations_count", "attempts", "created_at", "finished_at", "extraction_report"}


def status_of(doc: DocumentOut) -> dict[str, Any]:
    return doc.model_dump(mode="json", include=_STATUS_FIELDS | {"llm_prompt_tokens", "llm_completion_tokens"})


def register(server: MCPServer, runtime: Runtime) -> None:
    @server.tool(
        name="list_documents",
        description="The project's documents, newest first: id, status, source name, a summary of the text and "
        "how many entities and relations each gave.",
        annotations=_READS,
    )
    async def list_documents(
        ctx: Context,
        project_id: ProjectId = "default",
        status: DocumentStatus | None = None,
        limit: Annotated[int, Field(ge=1, le=1000)] = 50,
        offset: Annotated[int, Field(ge=0, le=2**62)] = 0,
        max_tokens: Budget = 4000,
    ) -> CallToolResult:
        async def work(c: Container, _: Principal) -> Answer:
            page = await IngestionService(c).list_documents(project_id, status, limit, offset)
            keep = {"id", "status", "file_path", "content_summary", "content_length", "entities_count"}
            keep |= {"relations_count", "created_at", "error"}
            data = {
                "documents": [d.model_dump(mode="json", include=keep) for d in page.documents],
                "total": page.total,
                "counts": page.counts.model_dump(),
            }
            return Answer(data, lists=["documents"])

        return await run_tool(runtime, ctx, "list_documents", project_id, max_tokens, work)

    @server.tool(
        name="get_document_chunks",
        description="A document's text as the chunks it was split into, in order (chunks overlap slightly).",
        annotations=_READS,
    )
    async def get_document_chunks(
        ctx: Context,
        document_id: DocumentId,
        project_id: ProjectId = "default",
        first_chunk: Annotated[int, Field(ge=0, description="Order of the first chunk returned.")] = 0,
        max_tokens: Budget = 8000,
    ) -> CallToolResult:
        async def work(c: Container, _: Principal) -> Answer:
            listed = await IngestionService(c).chunks(project_id, document_id)
            chunks = [k.model_dump(include={"id", "order", "content"}) for k in listed.chunks if k.order >= first_chunk]
            data = {"document_id": document_id, "total_chunks": len(listed.chunks), "chunks": chunks}
            return Answer(data, lists=["chunks"])

        return await run_tool(runtime, ctx, "get_document_chunks", project_id, max_tokens, work)

    @server.tool(
        name="document_status",
        description="Where a document is in the pipeline (pending, processing with its stage and progress, "
        "processed, failed with the reason, cancelled) and what it gave.",
        annotations=_READS,
    )
    async def document_status(
        ctx: Context, document_id: DocumentId, project_id: ProjectId = "default", max_tokens: Budget = 2000
    ) -> CallToolResult:
        async def work(c: Container, _: Principal) -> Answer:
            return Answer(status_of(await IngestionService(c).get(project_id, document_id)))

        return await run_tool(runtime, ctx, "document_status", project_id, max_tokens, work)

    if runtime.read_only:
        return

    @server.tool(
        name="ingest_text",
        description="Add a text document to the project's knowledge graph; returns its id at once, or with "
        "wait=true reports progress and returns when it is processed. The same text twice is a duplicate; "
        "other text under an existing document_id updates that document.",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False),
    )
    async def ingest_text(
        ctx: Context,
        text: Annotated[str, Field(min_length=1, description="The document's text.")],
        project_id: ProjectId = "default",
        document_id: Annotated[
            str | None,
            Field(max_length=512, description="Default: from the text's hash. An existing one: its new text."),
        ] = None,
        file_path: Annotated[str | None, Field(max_length=1024, description="Source name shown in citations.")] = None,
        wait: Annotated[bool, Field(description="Wait until processed, reporting progress.")] = False,
        wait_seconds: Annotated[float, Field(gt=0, le=WAIT_LIMIT_SECONDS)] = 300,
        max_tokens: Budget = 2000,
    ) -> CallToolResult:
        async def work(c: Container, _: Principal) -> Answer:
            service = IngestionService(c)
            submission = Submission(text=text, id=document_id, file_path=file_path)
            updates = DocumentUpdates(c)
            item = await updates.enqueue_one(project_id, submission)
            data: dict[str, Any] = item.model_dump(mode="json", exclude_none=True)
            followed = item.update_id or item.id  # an update is processed as a document of its own
            if wait and followed is not None and item.status in ("pending", "processing", "duplicate"):
                doc = await _follow(ctx, service, project_id, followed, wait_seconds)
                if item.status != "duplicate":
                    created = doc.id in updates.created or (item.update_id is None and item.status == "pending")
                    service.charge_request({doc.id: doc}, [doc.id] if created else [])
                    data["status"] = doc.status
                if item.update_id and item.id and doc.status == "processed":  # applied: the document as it is now
                    doc = await service.get(project_id, item.id)
                data["document"] = status_of(doc)
                data["done"] = doc.status in TERMINAL
            return Answer(data)

        return await run_tool(runtime, ctx, "ingest_text", project_id, max_tokens, work)


async def _follow(
    ctx: Context, service: IngestionService, project_id: str, document_id: str, limit: float
) -> DocumentOut:
    """Report the document's progress (chunks extracted of its chunks) until it ends or `limit` s pass."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    interval = service.settings.progress_write_interval  # how often a processing document's figures change
    reported = 0  # progress must not go back (a retried attempt starts its chunks again)
    while True:
        remaining = max(0.0, deadline - loop.time())
        done, _ = await service.wait_until_done(project_id, [document_id], limit=min(interval, remaining))
        doc = await service.get(project_id, document_id)
        progress = doc.progress
        total = progress.chunks_total if progress and progress.chunks_total else None
        finished = progress.chunks_done if progress else 0
        if done:
            finished = total or 1
            total = total or 1
        reported = finished = max(finished, reported)
        stage = f" ({doc.stage})" if doc.stage and not done else ""  # a finished one's is the last it reached
        await ctx.report_progress(finished, total, f"{doc.status}{stage}")
        if done or loop.time() >= deadline:
            return doc
