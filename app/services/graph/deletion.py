"""DELETE /documents/{id}: remove a document and repair the graph, in one transaction.

Affected entities and relations are found through the provenance indexes (never a project scan) and
locked with the pipeline's advisory-lock scheme. Items left without provenance are deleted; the others
are rebuilt from the cached extraction answers of their remaining chunks with the ingestion merge rules,
summarised when the thresholds say so and re-embedded — no extraction LLM call. Everything, including
the document's cache entries, commits or rolls back together, so a failure midway leaves the old state.

The plan (summaries, embeddings) is made with no transaction open; the transaction locks the keys the
document had provenance in, reads them again and writes the plan only if nothing it depends on moved.
A merge or rename can carry the document's provenance to a key outside the locked set meanwhile: then
the whole attempt starts again with that key (locks are only ever taken all at once, in one order).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncConnection

from app.container import Container
from app.domain.merge import (
    UNKNOWN_SOURCE,
    EntityMerge,
    RelationMerge,
    limit_method,
    limit_sources,
    merge_file_paths,
    truncate_note,
)
from app.domain.rebuild import RebuildPlan, chunks_needed, plan_rebuild
from app.domain.records import ChunkExtraction
from app.errors import Conflict, document_not_found
from app.repositories import curation as curation_repo
from app.repositories import deletion as repo
from app.repositories import graph as graph_repo
from app.repositories import llm_cache as cache_repo
from app.repositories import projects as projects_repo
from app.schemas.deletion import DocumentDeletion, LLMCalls
from app.services.cached_llm import CacheBatch
from app.services.graph.common import entity_gate
from app.services.graph.embedding import embed_changed
from app.services.graph.summaries import Summarizer
from app.services.ingest.extraction import extraction_from_cached
from app.services.projects import effective_settings, require_project
from app.usage import current_usage, track_usage

log = logging.getLogger(__name__)

# Plans found outdated under the locks before the plan is made under them (on the transaction's connection).
_PLANS_OUTSIDE_LOCKS = 3


@contextmanager
def llm_call_counter() -> Iterator[Callable[[], dict[str, int]]]:
    """Calls by operation made inside the block, without hiding them from the request's token headers."""
    outer = current_usage()
    if outer is None:
        with track_usage() as usage:
            yield lambda: dict(usage.calls_by_operation)
        return
    before = dict(outer.calls_by_operation)
    yield lambda: {op: n - before.get(op, 0) for op, n in outer.calls_by_operation.items()}


Pair = tuple[str, str]


def _keys_of(keys: list[str], pairs: list[Pair]) -> frozenset[str]:
    return frozenset([*keys, *(k for p in pairs for k in p)])


@dataclass
class Snapshot:
    keys: frozenset[str]               # entity keys the document has provenance in, and relation endpoints
    doc_chunks: list[dict]
    entities: dict[str, dict]          # affected entities with their full ordered provenance
    relations: dict[Pair, dict]

    @property
    def gone(self) -> set[str]:
        return {c["id"] for c in self.doc_chunks}


@dataclass
class Prepared:
    snapshot: Snapshot
    plan: RebuildPlan
    ent_rows: list[dict]
    rel_rows: list[dict]
    vectors: tuple[list[tuple], list[tuple]]


class _Outdated(Exception):
    """The plan no longer matches the graph under the locks (nothing was written)."""


class DeletionService:
    def __init__(self, c: Container) -> None:
        self.c = c
        self.settings = c.settings
        self.summarizer = Summarizer(c.db, c.llm, c.tokenizer, c.settings)

    async def delete_document(self, project_id: str, document_id: str) -> DocumentDeletion:
        with llm_call_counter() as calls:
            report = await self._delete(project_id, document_id)
            counted = calls()
        report.llm_calls = LLMCalls(extract=counted.get("extract", 0) + counted.get("glean", 0),
                                    summary=counted.get("summary", 0))
        return report

    async def _delete(self, pid: str, document_id: str) -> DocumentDeletion:
        """Attempts until one writes: each plans without holding a lock (re-parsing, summaries and
        embeddings can take a while), then locks, checks and writes in one transaction."""
        keys: set[str] = set()
        outdated = 0
        while True:
            async with self.c.db.connect() as conn:
                keys |= _keys_of(*await self._document_keys(conn, pid, document_id, lock=None))
            try:
                return await self._attempt(pid, document_id, keys, plan_under_locks=outdated >= _PLANS_OUTSIDE_LOCKS)
            except _Outdated:
                outdated += 1
                log.info("document %s/%s: graph changed while planning its deletion; planning again",
                         pid, document_id)

    async def _attempt(self, pid: str, document_id: str, keys: set[str], *,
                       plan_under_locks: bool) -> DocumentDeletion:
        """Plan and write under the locks of `keys`. Raises _Outdated when the document's provenance has
        reached keys outside them (`keys` grows) or, unless `plan_under_locks`, when the plan is outdated."""
        async with entity_gate(self.c.db, pid, keys):
            async with self.c.db.connect() as conn:
                snapshot = await self._snapshot(conn, pid, document_id, lock=None)
                inputs = await self._inputs(conn, pid, snapshot)
            if not snapshot.keys <= keys:
                keys |= snapshot.keys
                raise _Outdated
            prepared = await self._prepare(pid, snapshot, *inputs)
            batch = CacheBatch(self.c.db, pid)
            try:
                async with self.c.db.transaction() as conn:
                    current = await self._snapshot(conn, pid, document_id, lock=keys)
                    if not current.keys <= keys:
                        keys |= current.keys
                        raise _Outdated
                    if current != snapshot:
                        if not plan_under_locks:
                            raise _Outdated
                        # summaries look the cache up on this connection: never wait for a second one here
                        batch = CacheBatch(self.c.db, pid, conn)
                        inputs = await self._inputs(conn, pid, current)
                        prepared = await self._prepare(pid, current, *inputs, batch=batch)
                    return await self._apply(conn, pid, document_id, prepared)
            finally:
                await batch.flush_best_effort("deletion")

    async def _document_keys(self, conn: AsyncConnection, pid: str, document_id: str, *,
                             lock: set[str] | None) -> tuple[list[str], list[Pair]]:
        """The document's entity keys and relation pairs. With `lock`, the document row and those keys are
        locked first (the keys with the pipeline's advisory-lock scheme), and the provenance read after."""
        await require_project(conn, pid)
        doc = await repo.lock_document(conn, pid, document_id, lock=lock is not None)
        if doc is None:
            raise document_not_found(document_id)
        if doc["status"] == "processing":
            raise Conflict(f"Document '{document_id}' is still processing; delete it when it has finished",
                           code="document_processing")
        if lock is not None:
            await graph_repo.lock_keys(conn, pid, lock)
        return await graph_repo.keys_of_document(conn, pid, document_id)

    async def _snapshot(self, conn: AsyncConnection, pid: str, document_id: str, *,
                        lock: set[str] | None) -> Snapshot:
        """Everything the rebuild depends on; under `lock` (see _document_keys) it stays true until commit
        if its keys are all within `lock`."""
        keys, pairs = await self._document_keys(conn, pid, document_id, lock=lock)
        return Snapshot(
            keys=_keys_of(keys, pairs),
            doc_chunks=await repo.chunks_of_document(conn, pid, document_id),
            entities=await graph_repo.fetch_entities(conn, pid, keys),
            relations=await graph_repo.fetch_relations(conn, pid, pairs),
        )

    async def _inputs(self, conn: AsyncConnection, pid: str,
                      snap: Snapshot) -> tuple[dict[str, ChunkExtraction], dict[str, str], str]:
        needed = chunks_needed(snap.entities, snap.relations, snap.gone, self.settings)
        inputs = await repo.chunk_cache_inputs(conn, pid, needed)
        paths = {cid: c["file_path"] or UNKNOWN_SOURCE for cid, c in inputs.items()}
        return await self._cached_extractions(conn, pid, inputs), paths, await self._language(conn, pid)

    async def _prepare(self, pid: str, snap: Snapshot, extractions: dict[str, ChunkExtraction],
                       paths: dict[str, str], language: str, *, batch: CacheBatch | None = None) -> Prepared:
        plan = plan_rebuild(snap.entities, snap.relations, snap.gone, extractions, self.settings)
        ent_rows, rel_rows = await self._summarised_rows(pid, plan, snap.entities, snap.relations, paths,
                                                         language, batch)
        vectors = await self._embeddings(snap.entities, snap.relations, ent_rows, rel_rows)
        return Prepared(snap, plan, ent_rows, rel_rows, vectors)

    async def _apply(self, conn: AsyncConnection, pid: str, document_id: str, p: Prepared) -> DocumentDeletion:
        plan = p.plan
        cascaded = await repo.pairs_touching(conn, pid, plan.delete_entities)
        await repo.delete_document(conn, pid, document_id)
        await curation_repo.delete_relations(conn, pid, plan.delete_relations)
        await curation_repo.delete_entities(conn, pid, plan.delete_entities)
        await graph_repo.upsert_entities(conn, pid, p.ent_rows)
        await graph_repo.upsert_relations(conn, pid, p.rel_rows)
        await graph_repo.set_entity_embeddings(conn, pid, p.vectors[0])
        await graph_repo.set_relation_embeddings(conn, pid, p.vectors[1])
        await cache_repo.delete_unreferenced(
            conn, pid, [k for c in p.snapshot.doc_chunks for k in c["extraction_cache_keys"]])
        return DocumentDeletion(
            document_id=document_id, chunks_deleted=len(p.snapshot.doc_chunks),
            entities_deleted=len(plan.delete_entities), entities_rebuilt=len(p.ent_rows),
            relations_deleted=len(set(plan.delete_relations) | set(cascaded)), relations_rebuilt=len(p.rel_rows),
            llm_calls=LLMCalls(extract=0, summary=0),
        )

    async def _cached_extractions(self, conn: AsyncConnection, pid: str,
                                  inputs: dict[str, dict]) -> dict[str, ChunkExtraction]:
        """Re-parse the cached pass answers (first pass, then gleanings) of the given chunks."""
        cached = await cache_repo.get_many(conn, pid, [k for c in inputs.values() for k in c["extraction_cache_keys"]])
        work: list[tuple[str, list[str], str]] = []
        for chunk_id, chunk in inputs.items():
            answers = [cached[k]["response"] for k in chunk["extraction_cache_keys"] if k in cached]
            if len(answers) != len(chunk["extraction_cache_keys"]) or not answers:
                log.warning("chunk %s: cached extraction incomplete; items found nowhere else keep their text",
                            chunk_id)
            if answers:
                work.append((chunk_id, answers, chunk["file_path"] or UNKNOWN_SOURCE))
        limit = self.settings.entity_name_max_length

        def parse_all() -> dict[str, ChunkExtraction]:
            return {cid: extraction_from_cached(answers, cid, path, limit) for cid, answers, path in work}

        # Hub entities can pull in hundreds of chunks: parse off the event loop.
        return await asyncio.to_thread(parse_all)

    async def _language(self, conn: AsyncConnection, pid: str) -> str:
        row = await projects_repo.get(conn, pid)
        return effective_settings(self.settings, row["settings"] if row else None).language

    async def _summarised_rows(self, pid: str, plan: RebuildPlan, ents: dict, rels: dict, paths: dict[str, str],
                               language: str, batch: CacheBatch | None) -> tuple[list[dict], list[dict]]:
        """Rows to write: rebuilt items (summarised exactly as ingestion would, so its summary cache applies)
        and, for items without cached records, their current text with the shrunk source lists."""
        s = self.summarizer

        async def entity_text(m: EntityMerge) -> str:
            if not s.needs_llm(m.fragments):
                return m.description
            return await s.summarize("entity", m.name, m.fragments, language, project_id=pid, batch=batch)

        async def relation_text(m: RelationMerge) -> str:
            if not s.needs_llm(m.fragments):
                return m.description
            return await s.summarize("relation", f"({m.src_name}, {m.tgt_name})", m.fragments, language,
                                     project_id=pid, batch=batch)

        ent_texts, rel_texts = await asyncio.gather(
            asyncio.gather(*(entity_text(m) for m in plan.entities)),
            asyncio.gather(*(relation_text(m) for m in plan.relations)),
        )
        ent_rows = [{**m.row(), "description": text} for m, text in zip(plan.entities, ent_texts, strict=True)]
        rel_rows = [{**m.row(), "description": text} for m, text in zip(plan.relations, rel_texts, strict=True)]
        ent_rows += [self._kept_text_row(ents[k], remaining, self.settings.max_source_ids_per_entity, paths)
                     for k, remaining in plan.stale_entities.items()]
        rel_rows += [self._kept_text_row(rels[p], remaining, self.settings.max_source_ids_per_relation, paths)
                     for p, remaining in plan.stale_relations.items()]
        return ent_rows, rel_rows

    def _kept_text_row(self, row: dict, remaining: list[str], cap: int, paths: dict[str, str]) -> dict:
        """The item's current text with its provenance-derived fields (source ids, file paths) recomputed."""
        method = limit_method(self.settings)
        limited = limit_sources(remaining, cap, method)
        fields = ("name", "entity_type", "description") if "key" in row else ("keywords", "description", "weight")
        ident = {"key": row["key"]} if "key" in row else {"src_key": row["src_key"], "tgt_key": row["tgt_key"]}
        file_paths = merge_file_paths([], [paths.get(c) for c in limited], self.settings.max_file_paths, method)
        return {**ident, **{f: row[f] for f in fields}, "source_ids": limited, "file_paths": file_paths,
                "truncate": truncate_note(len(remaining), len(limited), method)}

    async def _embeddings(self, ents: dict, rels: dict, ent_rows: list[dict],
                          rel_rows: list[dict]) -> tuple[list[tuple], list[tuple]]:
        """Vectors for rebuilt items whose embedded text changed, in the graph repository's row formats."""
        # the stored display names and embedded hashes, with the rebuilt text
        ent_items = [{**row, "name": ents[row["key"]]["name"], "embedded_hash": ents[row["key"]]["embedded_hash"]}
                     for row in ent_rows]
        rel_items = []
        for row in rel_rows:
            old = rels[(row["src_key"], row["tgt_key"])]
            rel_items.append({**row, "src_name": old["src_name"], "tgt_name": old["tgt_name"],
                              "embedded_hash": old["embedded_hash"]})
        ent_done, rel_done = await embed_changed(self.c.embedder, ent_items, rel_items)
        return (
            [(d.item["key"], d.item["description"], d.vector, d.text_hash) for d in ent_done],
            [(d.item["src_key"], d.item["tgt_key"], d.item["description"], d.item["keywords"], d.vector, d.text_hash)
             for d in rel_done],
        )

