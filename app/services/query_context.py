"""Builds the context of one query: embeddings, retrieval per mode, token budgets, rerank, final messages."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from app.container import Container
from app.errors import InvalidInput
from app.prompts.answer import PROMPT_QUERY_SEPARATOR, system_prompt
from app.providers.llm import Message
from app.repositories import retrieval as repo
from app.schemas.query import Keywords, QueryRequest
from app.services.context import (
    CHUNK_MARGIN,
    MESSAGE_OVERHEAD,
    ReferenceEntry,
    entity_line,
    fit_chunks,
    fit_history,
    messages_tokens,
    relation_line,
    render_context,
    truncate_by_tokens,
)
from app.services.rerank import RerankService
from app.services.retrieval import (
    ChunkHit,
    EntityHit,
    GraphHits,
    RelationHit,
    Retriever,
    merge_chunks,
    merge_graph_hits,
)

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
    def __init__(self, c: Container, reranker: RerankService) -> None:
        self.c = c
        self.settings = c.settings
        self.tok = c.tokenizer
        self.reranker = reranker
        empty_relation = RelationHit("", "", "", "", "", "", 0.0, [])
        self._min_relation_tokens = self.tok.count(relation_line(empty_relation)) + 1

    async def has_content(self, project_id: str) -> bool:
        async with self.c.db.connect() as conn:
            return await repo.project_has_content(conn, project_id)

    def _fit_fixed(
        self, req: QueryRequest, system: str | None, history: list[Message], history_share: float = 1.0
    ) -> list[Message]:
        """The most recent history that fits next to the system prompt and the query, using at most
        `history_share` of the tokens they leave free."""
        fixed: list[Message] = [{"role": "system", "content": system}] if system else []
        fixed_tokens = messages_tokens(self.tok, [*fixed, {"role": "user", "content": req.query}])
        if fixed_tokens > req.max_total_tokens:
            raise _too_small(req.max_total_tokens, fixed_tokens)
        limit = fixed_tokens + int((req.max_total_tokens - fixed_tokens) * history_share)
        return fit_history(history, fixed_tokens, limit, self.tok)

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
        need_query_vec = mode in ("mix", "naive") or (method == "vector" and (use_local or use_global))

        history = self._fit_fixed(req, system_prompt("", req.response_type, req.user_prompt), history,
                                  history_share=HISTORY_SHARE)
        fixed = messages_tokens(self.tok, [{"role": "system", "content": system_prompt("", req.response_type,
                                                                                         req.user_prompt)},
                                           {"role": "user", "content": req.query}])
        remaining = req.max_total_tokens - fixed - sum(self.tok.count(m["content"]) + MESSAGE_OVERHEAD
                                                       for m in history)

        texts = ([req.query] if need_query_vec else []) + ([", ".join(ll)] if use_local else []) \
            + ([", ".join(hl)] if use_global else [])
        vectors = iter(await self.c.embedder.embed(texts)) if texts else iter(())
        query_vec = next(vectors) if need_query_vec else None
        ll_vec = next(vectors) if use_local else None
        hl_vec = next(vectors) if use_global else None

        ctx = PreparedContext(kg=kg)
        vector_chunks: list[ChunkHit] = []
        entity_chunks: list[ChunkHit] = []
        relation_chunks: list[ChunkHit] = []
        ef = max(self.settings.hnsw_ef_search, req.top_k, req.chunk_top_k)
        async with self.c.db.transaction() as conn:
            await repo.prepare_vector_search(conn, ef)
            r = Retriever(conn, req.project_id, min_similarity=self.settings.cosine_threshold)
            if query_vec is not None and mode in ("mix", "naive"):
                vector_chunks = await r.vector_chunks(query_vec, req.chunk_top_k)
            if use_local or use_global:
                rel_limit = max(1, req.max_relation_tokens // self._min_relation_tokens)
                local = await r.local(ll_vec, req.top_k, rel_limit) if ll_vec is not None else GraphHits()
                glob = await r.global_(hl_vec, req.top_k) if hl_vec is not None else GraphHits()
                hits = merge_graph_hits(local, glob)
                ctx.entities = truncate_by_tokens(hits.entities, entity_line,
                                                  max(0, min(req.max_entity_tokens, remaining)), self.tok)
                used = self.tok.count("\n".join(entity_line(e) for e in ctx.entities))
                ctx.relations = truncate_by_tokens(hits.relations, relation_line,
                                                   max(0, min(req.max_relation_tokens, remaining - used)), self.tok)
                kept = GraphHits(ctx.entities, ctx.relations)
                await r.attach_sources(kept)
                entity_chunks, relation_chunks = await r.graph_chunks(
                    kept, method, self.settings.related_chunk_number, query_vec
                )
        chunks = merge_chunks(vector_chunks, entity_chunks, relation_chunks)
        chunks = (await self._rerank(req, chunks))[:req.chunk_top_k]
        ctx.chunks = self._fit_chunks(req, ctx, history, chunks)
        self._finalise(req, ctx, history)
        return ctx

    async def _rerank(self, req: QueryRequest, chunks: list[ChunkHit]) -> list[ChunkHit]:
        if not (req.enable_rerank and self.reranker.enabled and chunks):
            return chunks
        outcome = await self.reranker.rerank(req.query, [c.content for c in chunks], req.chunk_top_k)
        if outcome.order is None:
            return chunks
        return [replace(chunks[i], rerank_score=score) for i, score in outcome.order]

    def _messages(self, req: QueryRequest, ctx: PreparedContext, history: list[Message]) -> list[Message]:
        context_text, ctx.references = render_context(
            ctx.entities if ctx.kg else None, ctx.relations if ctx.kg else None, ctx.chunks
        )
        system = system_prompt(context_text, req.response_type, req.user_prompt)
        ctx.prompt_text = system + PROMPT_QUERY_SEPARATOR + req.query
        return [{"role": "system", "content": system}, *history, {"role": "user", "content": req.query}]

    def _fit_chunks(
        self, req: QueryRequest, ctx: PreparedContext, history: list[Message], chunks: list[ChunkHit]
    ) -> list[ChunkHit]:
        without_chunks = messages_tokens(self.tok, self._messages(req, ctx, history))
        budget = req.max_total_tokens - without_chunks - CHUNK_MARGIN
        return fit_chunks(chunks, budget, self.tok) if budget > 0 else []

    def _finalise(self, req: QueryRequest, ctx: PreparedContext, history: list[Message]) -> None:
        """Render the final messages; if (rarely, through tokenizer merges) they exceed the budget, drop
        chunks, then relations, then entities, then the oldest history until they fit."""
        while True:
            messages = self._messages(req, ctx, history)
            total = messages_tokens(self.tok, messages)
            if total <= req.max_total_tokens:
                ctx.messages = messages
                return
            for items in (ctx.chunks, ctx.relations, ctx.entities, history):
                if items:
                    items.pop(0 if items is history else -1)
                    break
            else:
                raise _too_small(req.max_total_tokens, total)
