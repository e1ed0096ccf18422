"""LightRAG Server's /query, /query/stream and /query/data on top of QueryService: request and answer
translation only. Retrieval, budgets, caching and the LLM calls are the query service's."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

from pydantic import ValidationError

from app.adapters.lightrag.schemas import (
    LightragQueryData,
    LightragQueryRequest,
    LightragQueryResponse,
    LightragReference,
)
from app.adapters.lightrag.translate.unsupported import NotSupported
from app.container import Container
from app.core.errors import AppError, InvalidInput
from app.domain.context_budget import TokenLedger, render_context
from app.domain.query_plan import MODE_SEARCHES
from app.prompts.answer import NO_CONTEXT_ANSWER
from app.schemas.query import QueryRequest, QueryResponse
from app.services.query.service import Prepared, QueryService

SEP = "<SEP>"  # LightRAG's separator of several chunk ids or file paths in one field
UNKNOWN_SOURCE = "unknown_source"
_PASSED_ON = (
    "mode",
    "top_k",
    "chunk_top_k",
    "max_entity_tokens",
    "max_relation_tokens",
    "max_total_tokens",
    "only_need_context",
    "only_need_prompt",
    "response_type",
    "history_turns",
    "hl_keywords",
    "ll_keywords",
    "user_prompt",
    "enable_rerank",
)


def to_query_request(project_id: str, body: LightragQueryRequest, *, stream: bool = False) -> QueryRequest:
    if body.include_progress:
        raise NotSupported("include_progress (retrieval progress lines) is not supported by this service")
    values: dict[str, Any] = {"project_id": project_id, "query": body.query, "stream": stream}
    for name in _PASSED_ON:
        value = getattr(body, name)
        if value is not None:
            values[name] = value
    if body.conversation_history:
        values["conversation_history"] = [{"role": m.role, "content": m.content} for m in body.conversation_history]
    try:
        return QueryRequest.model_validate(values)
    except ValidationError as exc:
        fields = [{"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]} for e in exc.errors()]
        raise InvalidInput(json.dumps(fields), code="validation_error") from exc


def _references(response: QueryResponse, with_content: bool) -> list[LightragReference]:
    contents: dict[str, list[str]] = {}
    if with_content:
        for chunk in response.context.chunks:
            contents.setdefault(chunk.reference_id, []).append(chunk.content)
    return [
        LightragReference(
            reference_id=r.reference_id,
            file_path=r.file_path or UNKNOWN_SOURCE,
            content=contents.get(r.reference_id, []) if with_content else None,
        )
        for r in response.references
    ]


def _debug_text(c: Container, prepared: Prepared) -> str | None:
    """What LightRAG Server answers for only_need_context / only_need_prompt instead of an LLM answer."""
    req = prepared.request
    if req.only_need_prompt:
        return prepared.prompt or ""
    if req.only_need_context:
        ctx = prepared.context
        if ctx is None or ctx.empty:
            return ""
        segments, _ = render_context(
            ctx.entities if ctx.kg else None, ctx.relations if ctx.kg else None, ctx.chunks, TokenLedger(c.tokenizer)
        )
        return "".join(segments)
    return None


class LightragQuery:
    def __init__(self, c: Container) -> None:
        self.c = c
        self.service = QueryService(c)

    def _response_of(self, prepared: Prepared) -> QueryResponse:
        """The query service's JSON answer for a prepared query, without the answer text."""
        return QueryResponse.model_validate({**self.service.final_event(prepared), "response": None})

    async def answer(self, project_id: str, body: LightragQueryRequest) -> LightragQueryResponse:
        request = to_query_request(project_id, body)
        if request.only_need_context or request.only_need_prompt:
            prepared = await self.service.prepare(request)
            text, generated = _debug_text(self.c, prepared) or "", False
            response = self._response_of(prepared)
        else:
            response = await self.service.query(request)
            text = response.response or ""
            generated = text != NO_CONTEXT_ANSWER
        references = _references(response, bool(body.include_chunk_content)) if body.include_references else None
        return LightragQueryResponse(response=text, llm_generated=generated, references=references)

    async def stream_lines(self, project_id: str, body: LightragQueryRequest) -> AsyncGenerator[str, None]:
        """Prepare now (so 4xx/404/503 come before the stream starts), then return the NDJSON lines:
        references first, then the answer's pieces (`stream: false`: one line with both)."""
        prepared, deltas = await self.service.stream(to_query_request(project_id, body))
        debug = _debug_text(self.c, prepared)
        streaming = body.stream is not False and debug is None
        references = None
        if body.include_references:
            refs = _references(self._response_of(prepared), bool(body.include_chunk_content))
            references = [r.model_dump(exclude_none=True) for r in refs]

        async def lines() -> AsyncGenerator[str, None]:
            async with aclosing(deltas):
                if not streaming:
                    try:
                        text = debug if debug is not None else "".join([d async for d in deltas])
                    except AppError as exc:
                        yield _line({"error": exc.detail})
                        return
                    line: dict[str, Any] = {
                        "response": text,
                        "llm_generated": debug is None and not prepared.nothing_found,
                    }
                    if references is not None:
                        line["references"] = references
                    yield _line(line)
                    return
                if references is not None:
                    yield _line({"references": references})
                try:
                    async for delta in deltas:
                        if delta:
                            yield _line({"response": delta})
                except AppError as exc:  # headers are already sent: report in-band, as LightRAG Server does
                    yield _line({"error": exc.detail})

        return lines()

    async def data(self, project_id: str, body: LightragQueryRequest) -> LightragQueryData:
        request = to_query_request(project_id, body).model_copy(
            update={"only_need_context": True, "only_need_prompt": False}
        )
        # the graph's descriptions as stored, as LightRAG Server gives them (the answer prompt leaves out what the
        # chunks beside them say; a client reading these data is not that prompt)
        return query_data(await QueryService(self.c, whole_descriptions=True).query(request))


def _line(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False) + "\n"


def query_data(response: QueryResponse) -> LightragQueryData:
    ctx = response.context
    references = [
        {"reference_id": r.reference_id, "file_path": r.file_path or UNKNOWN_SOURCE} for r in response.references
    ]
    ref_of_path = {r["file_path"]: r["reference_id"] for r in references}

    def ref_for(paths: list[str]) -> str:
        return next((ref_of_path[p] for p in paths if p in ref_of_path), "")

    entities = [
        {
            "entity_name": e.name,
            "entity_type": e.type,
            "description": e.description,
            "source_id": SEP.join(e.source_chunk_ids),
            "file_path": SEP.join(e.file_paths),
            "reference_id": ref_for(e.file_paths),
        }
        for e in ctx.entities
    ]
    relations = [
        {
            "src_id": r.source,
            "tgt_id": r.target,
            "description": r.description,
            "keywords": r.keywords,
            "weight": r.weight,
            "source_id": SEP.join(r.source_chunk_ids),
            "file_path": SEP.join(r.file_paths),
            "reference_id": ref_for(r.file_paths),
        }
        for r in ctx.relations
    ]
    chunks = [
        {
            "content": ch.content,
            "file_path": ch.file_path or UNKNOWN_SOURCE,
            "chunk_id": ch.id,
            "reference_id": ch.reference_id,
        }
        for ch in ctx.chunks
    ]
    found = bool(entities or relations or chunks) or not MODE_SEARCHES[response.mode].retrieves
    return LightragQueryData(
        status="success",
        message="Query executed successfully" if found else NO_CONTEXT_ANSWER,
        data={"entities": entities, "relationships": relations, "chunks": chunks, "references": references},
        metadata={
            "query_mode": response.mode,
            "keywords": {"high_level": response.keywords.high_level, "low_level": response.keywords.low_level},
            "processing_info": {
                "entities_after_truncation": len(entities),
                "relations_after_truncation": len(relations),
                "final_chunks_count": len(chunks),
            },
        },
    )
