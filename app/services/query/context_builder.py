"""Builds the context of one query: embeddings, retrieval per mode, token budgets, rerank, final messages."""

from __future__ import annotations

import asyncio
from contextlib import nullcontext
from dataclasses import dataclass, field, replace

from app.container import Container
from app.core.errors import InvalidInput
from app.domain.chat import Message
from app.domain.context_budget import (
    CHUNK_MARGIN,
    ReferenceEntry,
    TokenLedger,
    entity_line,
    fit_chunks,
    fit_history,
    relation_line,
    render_context,
    truncate_by_tokens,
)
from app.domain.hits import ChunkHit, EntityHit, GraphHits, RelationHit
from app.prompts.answer import PROMPT_QUERY_SEPARATOR, system_head
from app.repositories import retrieval as repo
from app.schemas.query import Keywords, QueryRequest
from app.services.query.retrieval import Retriever, SearchOptions, merge_graph_hits

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


def _too_small(max_total: int, needed: int) -> InvalidInput:
    return InvalidInput(
        f"max_total_tokens ({max_total}) is too small: the instructions and the query alone need {needed} tokens",
        code="token_budget_too_small",
    )


class ContextBuilder:
    def __init__(self, c: Container) -> None:
        self.c = c
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

    async def build(self, req: QueryRequest, history: list[Message], keywords: Keywords) -> PreparedContext:
        mode = req.mode
        kg = mode != "naive"
        method = req.chunk_selection or self.settings.kg_chunk_pick_method.lower()
        ll, hl = keywords.low_level, keywords.high_level
        use_local = kg and bool(ll) and (mode in ("local", "hybrid", "mix") or (mode == "global" and not hl))
        use_global = kg and bool(hl) and (mode in ("global", "hybrid", "mix") or (mode == "local" and not ll))
        # the query vector also ranks the edges of the local side by relevance to the question
        need_query_vec = mode in ("mix", "naive") or use_local or use_global

        head = system_head(req.response_type, req.user_prompt)
        history = self._fit_fixed(req, head, history, history_share=HISTORY_SHARE)
        used = self.ledger.messages(
            [{"role": "system", "content": head}, *history, {"role": "user", "content": req.query}]
        )
        remaining = req.max_total_tokens - used

        texts = (
            ([req.query] if need_query_vec else [])
            + ([", ".join(ll)] if use_local else [])
            + ([", ".join(hl)] if use_global else [])
        )
        vectors = iter(await self.c.embedder.embed(texts)) if texts else iter(())
        query_vec = next(vectors) if need_query_vec else None
        ll_vec = next(vectors) if use_local else None
        hl_vec = next(vectors) if use_global else None

        ctx = PreparedContext(kg=kg)
        vector_chunks: list[ChunkHit] = []
        entity_ids: list[str] = []
        relation_ids: list[str] = []
        ef = max(self.settings.hnsw_ef_search, req.top_k, req.chunk_top_k)
        rel_limit = max(1, req.max_relation_tokens // self._min_relation_tokens)

        async def local_side(r: Retriever) -> GraphHits:
            if ll_vec is None:
                return GraphHits()
            return await r.local(ll, ll_vec, query_vec or ll_vec, req.top_k, rel_limit)

        async def other_side(r: Retriever) -> tuple[GraphHits, list[ChunkHit]]:
            """The global side and the chunk searches."""
            glob = await r.global_(hl, hl_vec, req.top_k, rel_limit) if hl_vec is not None else GraphHits()
            if query_vec is None or mode not in ("mix", "naive"):
                return glob, []
            # in mix the graph already states the facts of the entities found, so the searched chunks
            # should add much per token; naive has only chunks, so a chunk covering more is better
            return glob, await r.search_chunks(req.query, query_vec, req.chunk_top_k, by_density=mode == "mix")

        # local on one side; global and the chunk searches on the other, at once when the pool has a second
        # connection free (a second server process does them meanwhile)
        two_sides = ll_vec is not None and (hl_vec is not None or mode == "mix")
        async with self.c.db.transaction() as conn, self.c.db.spare() if two_sides else nullcontext(None) as spare:
            await repo.read_one_snapshot(conn, spare)
            await repo.prepare_vector_search(conn, ef)
            r = Retriever(conn, req.project_id, self._search_options(), self.c.common_words)
            if spare is not None:
                await repo.prepare_vector_search(spare, ef)
                beside = Retriever(spare, req.project_id, self._search_options(), self.c.common_words)
                async with asyncio.TaskGroup() as group:
                    local_task = group.create_task(local_side(r))
                    other_task = group.create_task(other_side(beside))
                local, (glob, vector_chunks) = local_task.result(), other_task.result()
            else:
                local = await local_side(r)
                glob, vector_chunks = await other_side(r)
            if use_local or use_global:
                hits = merge_graph_hits(local, glob)
                ctx.entities = truncate_by_tokens(
                    hits.entities, entity_line, min(req.max_entity_tokens, remaining), self.ledger
                )
                spent = sum(self.ledger.count(self.ledger.line(entity_line, e)) for e in ctx.entities)
                ctx.relations = truncate_by_tokens(
                    hits.relations, relation_line, min(req.max_relation_tokens, remaining - spent), self.ledger
                )
                kept = GraphHits(ctx.entities, ctx.relations)
                await r.attach_sources(kept)
                entity_ids, relation_ids = await r.graph_chunk_ids(
                    kept, method, self.settings.related_chunk_number, query_vec
                )
            rerank = req.enable_rerank and self.reranker.enabled
            chunks = await r.merged_chunks(vector_chunks, entity_ids, relation_ids, None if rerank else req.chunk_top_k)
        chunks = (await self._rerank(req, chunks))[: req.chunk_top_k]
        ctx.chunks = self._fit_chunks(req, ctx, history, chunks)
        self._finalise(req, ctx, history)
        return ctx

    def _search_options(self) -> SearchOptions:
        s = self.settings
        return SearchOptions(min_similarity=s.cosine_threshold, lexical=s.query_lexical, rrf_k=s.query_rrf_k)

    async def _rerank(self, req: QueryRequest, chunks: list[ChunkHit]) -> list[ChunkHit]:
        if not (req.enable_rerank and self.reranker.enabled and chunks):
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
        self, req: QueryRequest, ctx: PreparedContext, history: list[Message], chunks: list[ChunkHit]
    ) -> list[ChunkHit]:
        without_chunks = self._render(req, ctx, history)
        budget = req.max_total_tokens - without_chunks - CHUNK_MARGIN
        return fit_chunks(chunks, budget, self.ledger) if budget > 0 else []

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
