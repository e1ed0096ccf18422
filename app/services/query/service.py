"""Query orchestration: validate, extract keywords, retrieve per mode, budget and render the context,
then answer (cached per project), stream, or hand back the context/prompt only.

Everything sent to the answer LLM — system prompt with context, history and question — is kept within
`max_total_tokens` (checked on the final messages, not estimated).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import dataclass, field

from app.container import Container
from app.core.errors import InvalidInput, project_not_found
from app.core.usage import current_usage
from app.domain.chat import Message
from app.domain.citation_markers import MarkerStream
from app.domain.context_budget import trim_history
from app.domain.query_plan import QueryPlan, plan_query
from app.domain.texts import readable
from app.prompts.answer import NO_CONTEXT_ANSWER
from app.providers.llm import PRIORITY_QUERY
from app.repositories import retrieval as retrieval_repo
from app.schemas.query import (
    Citation,
    Claim,
    ContextChunk,
    ContextEntity,
    ContextRelation,
    Keywords,
    QueryContext,
    QueryRequest,
    QueryResponse,
    Reference,
)
from app.services.cached_llm import ChatRequest
from app.services.citations.checker import CheckedAnswer, CitationChecker, marker_context
from app.services.citations.llm_review import review_partial_claims
from app.services.projects import effective_settings
from app.services.query.context_builder import ContextBuilder, PreparedContext
from app.services.query.keywords import KeywordExtractor

log = logging.getLogger(__name__)

SHORT_QUERY_CHARS = 50  # both keyword lists empty: a query shorter than this is used as the low-level keyword


@dataclass
class Prepared:
    request: QueryRequest
    plan: QueryPlan
    history: list[Message]
    keywords: Keywords = field(default_factory=Keywords)
    context: PreparedContext | None = None
    messages: list[Message] = field(default_factory=list)  # what the answer call would send
    prompt: str | None = None
    raw_answer: list[str] = field(default_factory=list)  # the model's answer as it wrote it
    sent: list[str] = field(default_factory=list)  # the answer as streamed (markers rewritten)
    checked: CheckedAnswer | None = None

    @property
    def nothing_found(self) -> bool:
        return self.plan.retrieves and (self.context is None or self.context.empty)

    @property
    def cites(self) -> bool:
        """Whether the answer gets claims and citations: an LLM answer from a retrieved context."""
        req = self.request
        return not (req.only_need_context or req.only_need_prompt or self.nothing_found or not self.plan.retrieves)


class QueryService:
    def __init__(self, c: Container, *, whole_descriptions: bool = False) -> None:
        """`whole_descriptions`: graph descriptions as stored, not without the sentences the context's chunks
        already hold (for a caller that may show fewer chunks than the context has, see ContextBuilder)."""
        self.c = c
        self.settings = c.settings
        self.whole_descriptions = whole_descriptions

    # ----- validation against the service's configured caps -----
    def _validate(self, req: QueryRequest) -> None:
        s = self.settings
        problems: list[str] = []
        if len(req.query) > s.max_query_chars:
            problems.append(f"query is longer than {s.max_query_chars} characters")
        for name in ("top_k", "chunk_top_k"):
            if getattr(req, name) > s.max_top_k:
                problems.append(f"{name} must be at most {s.max_top_k}")
        for name in ("max_entity_tokens", "max_relation_tokens", "max_total_tokens"):
            if getattr(req, name) > s.max_token_limit:
                problems.append(f"{name} must be at most {s.max_token_limit}")
        if len(req.conversation_history) > s.max_history_messages:
            problems.append(f"conversation_history has more than {s.max_history_messages} messages")
        if any(len(m.content) > s.max_history_message_chars for m in req.conversation_history):
            problems.append(f"a conversation_history message is longer than {s.max_history_message_chars} characters")
        if problems:
            raise InvalidInput("; ".join(problems), code="query_limits")

    # ----- preparation shared by /query and /query/stream -----
    async def prepare(self, req: QueryRequest) -> Prepared:
        self._validate(req)
        async with self.c.db.read() as conn:
            project = await retrieval_repo.project_for_query(conn, req.project_id)
        if project is None:
            raise project_not_found(req.project_id)
        plan = plan_query(
            req.mode,
            self.settings,
            chunk_selection=req.chunk_selection,
            rerank=req.enable_rerank and self.c.reranker.enabled,
        )
        effective = effective_settings(self.settings, project["settings"])
        history = trim_history([m.model_dump() for m in req.conversation_history], req.history_turns)
        prepared = Prepared(req, plan, history)
        builder = ContextBuilder(self.c, whole_descriptions=self.whole_descriptions)
        if not plan.retrieves:
            prepared.messages = builder.bypass_messages(req, history)
            return prepared
        if not project["has_content"]:
            return prepared
        if plan.needs_keywords:
            prepared.keywords = await self._keywords(req, history, effective.language)
        prepared.context = await builder.build(req, plan, history, prepared.keywords)
        prepared.messages = prepared.context.messages
        if req.only_need_prompt:
            prepared.prompt = prepared.context.prompt_text
        return prepared

    async def _keywords(self, req: QueryRequest, history: list[Message], language: str) -> Keywords:
        if req.hl_keywords or req.ll_keywords:
            return Keywords(high_level=req.hl_keywords, low_level=req.ll_keywords)
        extractor = KeywordExtractor(self.c.llm_cache, cache_enabled=self.settings.enable_llm_cache)
        found = await extractor.extract(req.project_id, req.query, history, language)
        keywords = Keywords(high_level=found.high_level, low_level=found.low_level)
        if found.empty:
            log.warning("no keywords extracted for the query")
            if len(req.query) < SHORT_QUERY_CHARS:
                keywords.low_level = [req.query.strip()]
        return keywords

    # ----- answers -----
    async def query(self, req: QueryRequest) -> QueryResponse:
        prepared = await self.prepare(req)
        answer = await self._answer(prepared)
        if answer is not None and prepared.cites:
            prepared.raw_answer = [answer]
            checked = await self.cite(prepared)
            answer = checked.text if checked else answer
        return self._response(prepared, answer)

    async def cite(self, p: Prepared) -> CheckedAnswer | None:
        """The answer's claims and citations, once it is complete (None when the answer gets none)."""
        ctx = p.context
        if not p.cites or ctx is None:
            return None
        if p.checked is None:
            raw = "".join(p.raw_answer)
            try:
                p.checked = await CitationChecker(self.c.embedder).check(raw, ctx.chunks, ctx.references)
                if self.settings.citation_llm_check:
                    p.checked = await review_partial_claims(
                        self.c.llm_cache,
                        p.request.project_id,
                        p.checked,
                        ctx.chunks,
                        use_cache=self.settings.enable_llm_cache,
                    )
            except Exception:  # a fault of the check must not cost the user the answer itself
                log.exception("citation check failed")
                p.checked = CheckedAnswer("".join(p.sent) or raw, (), ())
        return p.checked

    async def _answer(self, p: Prepared) -> str | None:
        req = p.request
        if req.only_need_context or req.only_need_prompt:
            return None
        if p.nothing_found:
            return NO_CONTEXT_ANSWER
        if not p.plan.retrieves:
            result = await self.c.llm.chat(p.messages, operation="bypass", priority=PRIORITY_QUERY)
            return result.text
        request = ChatRequest(
            "query",
            p.messages,
            "query",
            priority=PRIORITY_QUERY,
            use_cache=self.settings.enable_llm_cache and not p.history,
        )
        cached = await self.c.llm_cache.chat(req.project_id, request)
        return cached.text

    async def stream(self, req: QueryRequest) -> tuple[Prepared, AsyncGenerator[str, None]]:
        """Prepare eagerly (so 4xx/404/503 happen before the stream starts), then yield text deltas.
        Closing the generator early closes the LLM stream behind it (and so frees its slot) at once."""
        prepared = await self.prepare(req)

        async def deltas() -> AsyncGenerator[str, None]:
            if req.only_need_context or req.only_need_prompt:
                return
            if prepared.nothing_found:
                yield NO_CONTEXT_ANSWER
                return
            operation = "query" if prepared.plan.retrieves else "bypass"
            ctx = prepared.context
            markers = MarkerStream(marker_context(ctx.chunks, ctx.references)) if ctx and prepared.cites else None
            answer = self.c.llm.stream(prepared.messages, operation=operation, priority=PRIORITY_QUERY)
            async with aclosing(answer):
                async for delta in answer:
                    prepared.raw_answer.append(delta)
                    if piece := markers.feed(delta) if markers else delta:
                        prepared.sent.append(piece)
                        yield piece
            if markers and (rest := markers.flush()):
                prepared.sent.append(rest)
                yield rest

        return prepared, deltas()

    def _response(self, p: Prepared, answer: str | None) -> QueryResponse:
        ctx = p.context
        return QueryResponse(
            response=answer,
            mode=p.request.mode,
            keywords=p.keywords,
            context=to_query_context(ctx),
            references=[
                Reference(reference_id=r.reference_id, document_id=r.document_id, file_path=r.file_path)
                for r in (ctx.references if ctx else [])
            ],
            claims=to_claims(p.checked),
            prompt=p.prompt,
        )

    def final_event(self, p: Prepared) -> dict:
        """The last SSE event: the JSON response (the answer as its claims index it: markers rewritten, a
        references list the model wrote left out), plus token usage. Await `cite` first."""
        body = self._response(p, None).model_dump(exclude={"response"})
        if p.checked is not None:
            body["response"] = p.checked.text
        elif p.sent:
            body["response"] = "".join(p.sent)
        usage = current_usage()
        body["usage"] = {
            "prompt_tokens": usage.prompt_tokens if usage else 0,
            "completion_tokens": usage.completion_tokens if usage else 0,
        }
        return body


def to_claims(checked: CheckedAnswer | None) -> list[Claim]:
    if checked is None:
        return []
    return [
        Claim(
            text=claim.text,
            start=claim.start,
            end=claim.end,
            support=claim.support,
            citations=[
                Citation(
                    chunk_id=c.chunk_id,
                    document_id=c.document_id,
                    file_path=c.file_path,
                    start=c.start,
                    end=c.end,
                    score=c.score,
                )
                for c in claim.citations
            ],
        )
        for claim in checked.claims
    ]


def to_query_context(ctx: PreparedContext | None) -> QueryContext:
    if ctx is None:
        return QueryContext()
    ref_of = {r.document_id: r.reference_id for r in ctx.references}
    return QueryContext(
        entities=[
            ContextEntity(
                name=e.name,
                type=e.entity_type,
                description=readable(e.description),
                degree=e.degree,
                source_chunk_ids=e.chunk_ids,
                file_paths=e.file_paths,
            )
            for e in ctx.entities
        ],
        relations=[
            ContextRelation(
                source=r.src_name,
                target=r.tgt_name,
                keywords=r.keywords,
                description=readable(r.description),
                weight=r.weight,
                source_chunk_ids=r.chunk_ids,
                file_paths=r.file_paths,
            )
            for r in ctx.relations
        ],
        chunks=[
            ContextChunk(
                id=c.id,
                document_id=c.document_id,
                content=c.content,
                file_path=c.file_path,
                reference_id=ref_of.get(c.document_id, ""),
                source=c.source,
                rerank_score=c.rerank_score,
            )
            for c in ctx.chunks
        ],
    )
