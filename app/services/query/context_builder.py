"""Builds the context of one query: embeddings, the searches its plan asks for, token budgets, rerank, final
messages."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field, replace

from app.container import Container
from app.core.errors import InvalidInput
from app.domain.chat import Message
from app.domain.chunk_echoes import Item, ShownText, without_echoes
from app.domain.context_budget import (
    CHUNK_MARGIN,
    ReferenceEntry,
    TokenLedger,
    chunk_cost,
    entity_line,
    fit_chunks,
    fit_history,
    relation_line,
    render_context,
    truncate_by_tokens,
    yield_to_chunks,
)
from app.domain.hits import ChunkHit, EntityHit, GraphHits, RelationHit
from app.domain.query_plan import QueryPlan, Sides
from app.prompts.answer import PROMPT_QUERY_SEPARATOR, system_head
from app.repositories import retrieval as repo
from app.schemas.query import Keywords, QueryRequest
from app.services.query.graph_chunks import CANDIDATES, LOCAL_CANDIDATES, fused_chunk_order, ranked_chunk_ids
from app.services.query.provenance import QueryProvenance
from app.services.query.retrieval import Retriever, merge_graph_hits

GRAPH_MARGIN = 20  # tokens kept free when the graph fills the room the chunks left (the render is exact)
HISTORY_SHARE = 0.5  # conversation history may take at most this share of the budget left by prompt and query


@dataclass
class PreparedContext:
    kg: bool
    entities: list[EntityHit] = field(default_factory=list)
    relations: list[RelationHit] = field(default_factory=list)
    chunks: list[ChunkHit] = field(default_factory=list)
    references: list[ReferenceEntry] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    prompt_text: str = ""

    @property
    def empty(self) -> bool:
        return not (self.entities or self.relations or self.chunks)


@dataclass(frozen=True)
class _Vectors:
    query: list[float] | None = None
    low_level: list[float] | None = None
    high_level: list[float] | None = None


@dataclass(frozen=True)
class _Search:
    """One query's searches: the request, its plan and sides, the keywords and their vectors."""

    req: QueryRequest
    plan: QueryPlan
    sides: Sides
    keywords: Keywords
    vectors: _Vectors
    relation_limit: int


def _too_small(max_total: int, needed: int) -> InvalidInput:
    return InvalidInput(
        f"max_total_tokens ({max_total}) is too small: the instructions and the query alone need {needed} tokens",
        code="token_budget_too_small",
    )


class ContextBuilder:
    def __init__(self, c: Container, *, whole_descriptions: bool = False) -> None:
        self.c = c
        self.whole_descriptions = whole_descriptions  # echoes kept: the caller may show only some of the chunks
        self.settings = c.settings
        self.ledger = TokenLedger(c.tokenizer)
        self.reranker = c.reranker
        empty_relation = RelationHit("", "", "", "", "", "", 0.0, [])
        self._min_relation_tokens = self.ledger.count(relation_line(empty_relation) + "\n")

    def _fit_fixed(
        self, req: QueryRequest, system: str | None, history: list[Message], history_share: float = 1.0
    ) -> list[Message]:
        """The most recent history that fits next to the system prompt and the query, using at most
        `history_share` of the tokens they leave free."""
        fixed: list[Message] = [{"role": "system", "content": system}] if system else []
        fixed_tokens = self.ledger.messages([*fixed, {"role": "user", "content": req.query}])
        if fixed_tokens > req.max_total_tokens:
            raise _too_small(req.max_total_tokens, fixed_tokens)
        limit = fixed_tokens + int((req.max_total_tokens - fixed_tokens) * history_share)
        return fit_history(history, fixed_tokens, limit, self.ledger)

    def bypass_messages(self, req: QueryRequest, history: list[Message]) -> list[Message]:
        system = (req.user_prompt or "").strip() or None
        kept = self._fit_fixed(req, system, history)
        head: list[Message] = [{"role": "system", "content": system}] if system else []
        return [*head, *kept, {"role": "user", "content": req.query}]

    async def build(
        self, req: QueryRequest, plan: QueryPlan, history: list[Message], keywords: Keywords
    ) -> PreparedContext:
        history, remaining = self._history_and_room(req, history)
        guessed = set(keywords.low_level) <= {req.query.strip(), *keywords.high_level}
        sides = plan.sides(bool(keywords.low_level), bool(keywords.high_level), guessed)
        search = _Search(req, plan, sides, keywords, await self._embed(req, sides, keywords), self._relation_limit(req))
        ctx = PreparedContext(kg=plan.graph)
        chunks, found = await self._retrieve(search, ctx, remaining)
        chunks = (await self._rerank(req, plan, chunks))[: req.chunk_top_k]
        ctx.chunks = self._fit_chunks(req, plan, ctx, history, chunks)
        if ctx.kg and (found.entities or found.relations):
            self._refill_graph(req, plan, ctx, (history, remaining), chunks, found)
        self._finalise(req, ctx, history)
        return ctx

    def _history_and_room(self, req: QueryRequest, history: list[Message]) -> tuple[list[Message], int]:
        """The history kept beside the instructions and the query, and the tokens they leave for the context."""
        head = system_head(req.response_type, req.user_prompt)
        history = self._fit_fixed(req, head, history, history_share=HISTORY_SHARE)
        used = self.ledger.messages(
            [{"role": "system", "content": head}, *history, {"role": "user", "content": req.query}]
        )
        return history, req.max_total_tokens - used

    async def _embed(self, req: QueryRequest, sides: Sides, keywords: Keywords) -> _Vectors:
        """One embedding call for the vectors the sides need: the question, the low- and high-level keywords."""
        texts = (
            ([req.query] if sides.query_vector else [])
            + ([", ".join(keywords.low_level)] if sides.local else [])
            + ([", ".join(keywords.high_level)] if sides.global_ else [])
        )
        vectors = iter(await self.c.embedder.embed(texts)) if texts else iter(())
        return _Vectors(
            query=next(vectors) if sides.query_vector else None,
            low_level=next(vectors) if sides.local else None,
            high_level=next(vectors) if sides.global_ else None,
        )

    def _relation_limit(self, req: QueryRequest) -> int:
        """How many relations the relation budget could hold at most (a relation costs at least an empty line)."""
        return max(1, req.max_relation_tokens // self._min_relation_tokens)

    async def _retrieve(
        self, search: _Search, ctx: PreparedContext, remaining: int
    ) -> tuple[list[ChunkHit], GraphHits]:
        """Run the sides, keep in `ctx` the entities and relations the budgets allow, and return the chunks (the
        searched ones merged with those of the kept entities and relations; all of them when reranking) and
        everything the sides found, with its sources, for `_refill_graph`."""
        req, plan = search.req, search.plan
        ef = max(self.settings.hnsw_ef_search, req.top_k, req.chunk_top_k)
        db = self.c.db
        async with db.read() as conn, db.spare(conn) if search.sides.parallel else nullcontext(None) as spare:
            await repo.open_query_reads(conn, spare, ef)
            provenance = QueryProvenance(req.project_id)
            r = Retriever(conn, req.project_id, plan, self.c.common_words, provenance)
            beside = None if spare is None else Retriever(spare, req.project_id, plan, self.c.common_words, provenance)
            local, glob, searched = await self._run_sides(search, r, beside)
            limit = None if plan.rerank else req.chunk_top_k
            kept = found = GraphHits()
            if search.sides.graph:
                found = merge_graph_hits(local, glob)
                self._keep_graph(req, ctx, found, remaining)
                kept = GraphHits(ctx.entities, ctx.relations)
                await r.attach_sources(found)
            if plan.graph_rank and plan.graph:
                order = fused_chunk_order(local, glob, searched)
                return await r.load_chunks(searched, order, limit), found
            entity_ids: list[str] = []
            relation_ids: list[str] = []
            if search.sides.graph:
                entity_ids, relation_ids = await r.graph_chunk_ids(
                    kept, self.settings.related_chunk_number, search.vectors.query
                )
            return await r.merged_chunks(searched, entity_ids, relation_ids, limit), found

    async def _run_sides(
        self, search: _Search, r: Retriever, beside: Retriever | None
    ) -> tuple[GraphHits, GraphHits, list[ChunkHit]]:
        """Local on `r`; global and the chunk searches at the same time on `beside` when there is a second
        connection (a second server process does them meanwhile), else after local on `r`."""
        if beside is None:
            local = await self._local_side(search, r)
            glob, searched = await self._other_side(search, r)
            return local, glob, searched
        async with asyncio.TaskGroup() as group:
            local_task = group.create_task(self._local_side(search, r))
            other_task = group.create_task(self._other_side(search, beside))
        glob, searched = other_task.result()
        return local_task.result(), glob, searched

    async def _local_side(self, search: _Search, r: Retriever) -> GraphHits:
        low, query = search.vectors.low_level, search.vectors.query
        if low is None:
            return GraphHits()
        req = search.req
        hits = await r.local(search.keywords.low_level, low, query or low, req.top_k, search.relation_limit)
        return await self._rank_chunks(search, r, hits, LOCAL_CANDIDATES)

    async def _rank_chunks(
        self, search: _Search, r: Retriever, hits: GraphHits, candidates: int = CANDIDATES
    ) -> GraphHits:
        """With QUERY_GRAPH_RANK, the side's own chunk ranking (on the side's connection, so in parallel)."""
        if search.plan.graph_rank and search.vectors.query is not None:
            hits.chunk_ids = await ranked_chunk_ids(r, hits, search.req.query, search.vectors.query, candidates)
        return hits

    async def _other_side(self, search: _Search, r: Retriever) -> tuple[GraphHits, list[ChunkHit]]:
        """The global side and the chunk searches."""
        req, high, query = search.req, search.vectors.high_level, search.vectors.query
        glob = GraphHits()
        if high is not None:
            glob = await r.global_(
                search.keywords.high_level, high, req.top_k, search.relation_limit, query, search.keywords.low_level
            )
            glob = await self._rank_chunks(search, r, glob)
        if query is None or not search.sides.chunk_search:
            return glob, []
        return glob, await r.search_chunks(req.query, query, req.chunk_top_k)

    def _keep_graph(self, req: QueryRequest, ctx: PreparedContext, hits: GraphHits, remaining: int) -> None:
        """The entities, then the relations, that fit their token budgets and the room left."""
        ctx.entities = truncate_by_tokens(
            hits.entities, entity_line, min(req.max_entity_tokens, remaining), self.ledger
        )
        spent = sum(self.ledger.count(self.ledger.line(entity_line, e)) for e in ctx.entities)
        ctx.relations = truncate_by_tokens(
            hits.relations, relation_line, min(req.max_relation_tokens, remaining - spent), self.ledger
        )

    def _refill_graph(  # noqa: PLR0913
        self,
        req: QueryRequest,
        plan: QueryPlan,
        ctx: PreparedContext,
        fixed: tuple[list[Message], int],
        chunks: list[ChunkHit],
        found: GraphHits,
    ) -> None:
        """The graph lines again, without the sentences the shown chunks already hold (`domain/chunk_echoes.py`),
        so lines whose chunks are not shown take the room. Where the chunks come first, the graph fills what they
        leave. Where the graph does (global), it keeps the items it had and the chunks take the room its relations'
        echoes free (its entities, the relations' ends, keep their descriptions, which tell which entity a name
        means: trimmed, an alias shared by several entities lost that on the synthetic world). Start from the
        chunks that would fit beside no graph at all; while the graph trimmed by them leaves room for fewer, trim
        by those fewer (the shown chunks only shrink, so this ends, with the graph trimmed by exactly the chunks
        shown). `fixed`: the history kept and the room it and the instructions leave."""
        history, remaining = fixed
        if plan.chunks_before_weak_graph:
            shown = ShownText(ctx.chunks)
            ctx.entities, ctx.relations = [], []
            room = self._chunk_room(req, ctx, history) + CHUNK_MARGIN - GRAPH_MARGIN
            trimmed = GraphHits(self._unechoed(found.entities, shown), self._unechoed(found.relations, shown))
            self._keep_graph(req, ctx, trimmed, room)
            return
        kept = GraphHits(ctx.entities, ctx.relations)  # the graph keeps its items; what it frees goes to chunks
        ctx.entities, ctx.relations, ctx.chunks = [], [], []
        fitted = self._fit_chunks(req, plan, ctx, history, chunks)
        while True:
            shown = ShownText(fitted)
            trimmed = GraphHits(kept.entities, self._unechoed(kept.relations, shown))
            self._keep_graph(req, ctx, trimmed, remaining)
            ctx.chunks = self._fit_chunks(req, plan, ctx, history, fitted)
            if len(ctx.chunks) == len(fitted):
                return
            fitted, ctx.chunks = ctx.chunks, []

    def _unechoed(self, items: Sequence[Item], shown: ShownText) -> list[Item]:
        return list(items) if self.whole_descriptions else without_echoes(items, shown)

    async def _rerank(self, req: QueryRequest, plan: QueryPlan, chunks: list[ChunkHit]) -> list[ChunkHit]:
        if not (plan.rerank and chunks):
            return chunks
        outcome = await self.reranker.rerank(req.query, [c.content for c in chunks], req.chunk_top_k)
        if outcome.order is None:
            return chunks
        return [replace(chunks[i], rerank_score=score) for i, score in outcome.order]

    def _render(self, req: QueryRequest, ctx: PreparedContext, history: list[Message]) -> int:
        """Build the final messages into `ctx` and return their exact token cost."""
        segments, ctx.references = render_context(
            ctx.entities if ctx.kg else None, ctx.relations if ctx.kg else None, ctx.chunks, self.ledger
        )
        system_segments = [system_head(req.response_type, req.user_prompt), *segments]
        system = "".join(system_segments)
        ctx.prompt_text = system + PROMPT_QUERY_SEPARATOR + req.query
        ctx.messages = [{"role": "system", "content": system}, *history, {"role": "user", "content": req.query}]
        return self.ledger.messages(ctx.messages, system_segments)

    def _fit_chunks(
        self, req: QueryRequest, plan: QueryPlan, ctx: PreparedContext, history: list[Message], chunks: list[ChunkHit]
    ) -> list[ChunkHit]:
        """The leading chunks that fit the room the rest of the context leaves. When the plan says so and the
        chunks asked for would not all fit, the graph's lowest-ranked lines give way first."""
        room = self._chunk_room(req, ctx, history)
        if plan.chunks_before_weak_graph and ctx.kg:
            wanted = sum(chunk_cost(c, self.ledger) for c in chunks)
            if wanted > room:
                ctx.entities, ctx.relations = yield_to_chunks(ctx.entities, ctx.relations, wanted - room, self.ledger)
                room = self._chunk_room(req, ctx, history)
        return fit_chunks(chunks, room, self.ledger) if room > 0 else []

    def _chunk_room(self, req: QueryRequest, ctx: PreparedContext, history: list[Message]) -> int:
        return req.max_total_tokens - self._render(req, ctx, history) - CHUNK_MARGIN

    def _finalise(self, req: QueryRequest, ctx: PreparedContext, history: list[Message]) -> None:
        """Render the final messages; should they exceed the budget (reference-list lines are estimated while
        fitting), drop chunks, then relations, then entities, then the oldest history until they fit."""
        while True:
            total = self._render(req, ctx, history)
            if total <= req.max_total_tokens:
                return
            for items in (ctx.chunks, ctx.relations, ctx.entities, history):
                if items:
                    items.pop(0 if items is history else -1)
                    break
            else:
                raise _too_small(req.max_total_tokens, total)
