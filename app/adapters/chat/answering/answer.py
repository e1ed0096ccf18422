"""A chat answer: the query's text deltas (or, for /context, the retrieved context), then the footnotes of the
documents it cited (unless the model wrote its own references list), with the timings and token counts the
chat protocols report.

Both protocols answer through the query service's stream, also when the client asked for one JSON object,
so the durations are measured the same way: `load` until retrieval is done, `prompt_eval` until the answer's
first piece, `eval` from there to the end, all in nanoseconds; token counts are everything the request spent
(keyword extraction and answer), as the X-Token-* headers report.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import dataclass

from app.adapters.chat.answering.conversation import ChatQuery
from app.adapters.chat.answering.models import model_not_found
from app.container import Container
from app.core.errors import NotFound
from app.core.usage import current_usage
from app.domain.citation_text import footnotes, model_references_start
from app.domain.context_budget import TokenLedger, render_context
from app.services.query.service import Prepared, QueryService

NO_CONTEXT = "No context was found in this project's knowledge base for this question."


@dataclass
class AnswerStats:
    started_ns: int
    prepared_ns: int = 0
    first_piece_ns: int = 0
    finished_ns: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_duration(self) -> int:
        return self.finished_ns - self.started_ns

    @property
    def load_duration(self) -> int:
        return self.prepared_ns - self.started_ns

    @property
    def prompt_eval_duration(self) -> int:
        return self.first_piece_ns - self.prepared_ns

    @property
    def eval_duration(self) -> int:
        return self.finished_ns - self.first_piece_ns


class ChatAnswer:
    """Iterate `pieces()` once; `stats` is complete when it ends."""

    def __init__(
        self,
        service: QueryService,
        query: ChatQuery,
        prepared: Prepared,
        deltas: AsyncGenerator[str, None],
        stats: AnswerStats,
    ) -> None:
        self.service = service
        self.c = service.c
        self.query = query
        self.prepared = prepared
        self._deltas = deltas
        self.stats = stats

    @property
    def model(self) -> str:
        return self.query.model

    async def pieces(self) -> AsyncGenerator[str, None]:
        try:
            async with aclosing(self._deltas):
                if self.query.context_only:
                    yield self._mark(self.context_text())
                    return
                async for delta in self._deltas:
                    yield self._mark(delta)
            if notes := await self.footnotes_text():
                yield self._mark(notes)
        finally:
            self._finish()

    async def text(self) -> str:
        return "".join([piece async for piece in self.pieces()])

    def context_text(self) -> str:
        ctx = self.prepared.context
        if ctx is None or ctx.empty:
            return NO_CONTEXT
        segments, _ = render_context(
            ctx.entities if ctx.kg else None,
            ctx.relations if ctx.kg else None,
            ctx.chunks,
            TokenLedger(self.c.tokenizer),
        )
        return "".join(segments)

    async def footnotes_text(self) -> str:
        """The documents the answer cited, one line each — none when the model already wrote a references list
        (so the reader never sees two)."""
        ctx = self.prepared.context
        checked = await self.service.cite(self.prepared)
        if ctx is None or checked is None or model_references_start("".join(self.prepared.sent)) is not None:
            return ""
        label = {r.reference_id: r.label for r in ctx.references}
        return footnotes([(ref, label[ref]) for ref in sorted(checked.cited_documents, key=int) if ref in label])

    def _mark(self, piece: str) -> str:
        if not self.stats.first_piece_ns:
            self.stats.first_piece_ns = time.perf_counter_ns()
        return piece

    def _finish(self) -> None:
        stats = self.stats
        stats.finished_ns = time.perf_counter_ns()
        stats.first_piece_ns = stats.first_piece_ns or stats.finished_ns
        usage = current_usage()
        if usage is not None:
            stats.prompt_tokens, stats.completion_tokens = usage.prompt_tokens, usage.completion_tokens


async def start_answer(c: Container, query: ChatQuery, started_ns: int) -> ChatAnswer:
    """Retrieve (so 4xx/404/503 come before any answer is sent); the answer itself comes from `pieces()`.
    A project that does not exist is the 404 of an unknown model."""
    try:
        service = QueryService(c)
        prepared, deltas = await service.stream(query.request)
    except NotFound as exc:
        if exc.code == "project_not_found":
            raise model_not_found(query.model) from exc
        raise
    return ChatAnswer(service, query, prepared, deltas, AnswerStats(started_ns, prepared_ns=time.perf_counter_ns()))
