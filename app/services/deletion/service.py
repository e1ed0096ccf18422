"""DELETE /documents/{id} and POST /documents/delete: remove documents and repair the graph, in one
transaction. A batch is one deletion of a set of documents: one plan over the union of their keys, one set
of locks, and each touched entity or relation rebuilt and summarised once, however many of them touched it.

Affected entities and relations are found through the provenance indexes (never a project scan) and
locked with the pipeline's advisory-lock scheme. Items left without provenance are deleted; the others
are rebuilt from the extraction records of their remaining chunks (stored with each chunk, else parsed
again from its cached answers: services/graph/rebuild_inputs.py) with the ingestion merge rules,
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
from dataclasses import dataclass, replace
from functools import partial

from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection

from app.container import Container
from app.core.errors import Conflict, NotFound, document_not_found
from app.core.usage import current_usage, track_usage
from app.db.errors import is_deadlock
from app.domain.merge_rules import (
    EntityMerge,
    RelationMerge,
    limit_method,
    limit_sources,
    merge_file_paths,
    truncate_note,
)
from app.domain.rebuild import RebuildPlan, chunks_needed, plan_rebuild
from app.domain.rows import (
    ChunkCacheRef,
    EntityEmbeddingUpdate,
    EntityRow,
    EntityText,
    RelationEmbeddingUpdate,
    RelationRow,
    RelationText,
)
from app.repositories import deletion as repo
from app.repositories import graph as graph_repo
from app.repositories import graph_curation as curation_repo
from app.repositories import llm_cache as cache_repo
from app.repositories import projects as projects_repo
from app.schemas.deletion import BatchDeletion, DocumentDeletion, LLMCalls
from app.services.cached_llm import CacheBatch
from app.services.deletion.rebuild_inputs import RebuildInputs, read_inputs, store_parsed
from app.services.graph.embedding import embed_changed
from app.services.graph.gate import entity_gate, locked_keys
from app.services.graph.summaries import Summarizer
from app.services.ingest.resolved_records import resolved_extractions
from app.services.projects import EffectiveSettings, effective_settings, require_project

log = logging.getLogger(__name__)

# Plans found outdated under the locks before the plan is made under them (on the transaction's connection).
_PLANS_OUTSIDE_LOCKS = 3
_DEADLOCK_RETRIES = 3  # attempts the server aborted to break a deadlock, tried again


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
    keys: frozenset[str]  # entity keys the document has provenance in, and relation endpoints
    doc_chunks: list[ChunkCacheRef]
    entities: dict[str, EntityRow]  # affected entities with their full ordered provenance
    relations: dict[Pair, RelationRow]

    @property
    def gone(self) -> set[str]:
        return {c.id for c in self.doc_chunks}


@dataclass
class Prepared:
    snapshot: Snapshot
    plan: RebuildPlan
    ent_rows: list[dict]
    rel_rows: list[dict]
    vectors: tuple[list[EntityEmbeddingUpdate], list[RelationEmbeddingUpdate]]
    batch: CacheBatch  # the summaries' new cache entries, written after the deletion commits


class _Outdated(Exception):
    """The plan no longer matches the graph under the locks (nothing was written)."""


class DeletionService:
    def __init__(self, c: Container) -> None:
        self.c = c
        self.settings = c.settings
        self.summarizer = Summarizer(c.llm_cache, c.tokenizer, c.settings)

    async def delete_document(self, project_id: str, document_id: str) -> DocumentDeletion:
        report = await self.delete_documents(project_id, [document_id])
        return DocumentDeletion(document_id=document_id, **report.model_dump(exclude={"document_ids"}))

    async def delete_documents(self, project_id: str, document_ids: list[str]) -> BatchDeletion:
        """Delete the documents together (404 if one is unknown, 409 if one is processing: then none is)."""
        ids = tuple(sorted(set(document_ids)))
        with llm_call_counter() as calls:
            report = await self._delete(project_id, ids)
            counted = calls()
        report.llm_calls = LLMCalls(
            extract=counted.get("extract", 0) + counted.get("glean", 0), summary=counted.get("summary", 0)
        )
        return report

    async def _delete(self, project_id: str, document_ids: tuple[str, ...]) -> BatchDeletion:
        """Attempts until one writes: each plans without holding a lock (re-parsing, summaries and
        embeddings can take a while), then locks, checks and writes in one transaction."""
        keys: set[str] = set()
        outdated = deadlocks = 0
        while True:
            async with self.c.db.connect() as conn:
                await self._check_documents(conn, project_id, document_ids, lock=False)
                keys |= _keys_of(*await repo.keys_of_documents(conn, project_id, document_ids))
            try:
                return await self._attempt(
                    project_id, document_ids, keys, plan_under_locks=outdated >= _PLANS_OUTSIDE_LOCKS
                )
            except DBAPIError as exc:  # e.g. the cascade met an update's rows locked the other way round
                deadlocks += 1
                if not is_deadlock(exc) or deadlocks > _DEADLOCK_RETRIES:
                    raise
                log.warning("deletion in %s chosen as a deadlock victim; trying again", project_id)
            except _Outdated:
                outdated += 1
                log.info(
                    "documents %s/%s: graph changed while planning their deletion; planning again",
                    project_id,
                    ",".join(document_ids)[:200],
                )

    async def _attempt(
        self, project_id: str, document_ids: tuple[str, ...], keys: set[str], *, plan_under_locks: bool
    ) -> BatchDeletion:
        """Plan and write under the locks of `keys`. Raises _Outdated when the document's provenance has
        reached keys outside them (`keys` grows) or, unless `plan_under_locks`, when the plan is outdated."""
        async with entity_gate(self.c.db, project_id, keys):
            async with self.c.db.connect() as conn:
                await self._check_documents(conn, project_id, document_ids, lock=False)
                snapshot = await self._snapshot(conn, project_id, document_ids)
                inputs = await self._inputs(conn, project_id, snapshot)
            if not snapshot.keys <= keys:
                keys |= snapshot.keys
                raise _Outdated
            prepared = await self._prepare(project_id, snapshot, *inputs)
            batches = [prepared.batch]
            try:
                # the document rows are locked before the keys, as the pipeline's claim is
                documents_locked = partial(
                    self._check_documents, project_id=project_id, document_ids=document_ids, lock=True
                )
                async with locked_keys(self.c.db, project_id, keys, gate=False, first=documents_locked) as conn:
                    current = await self._snapshot(conn, project_id, document_ids)
                    if not current.keys <= keys:
                        keys |= current.keys
                        raise _Outdated
                    if current != snapshot:
                        if not plan_under_locks:
                            raise _Outdated
                        # summaries look the cache up on this connection: never wait for a second one here
                        batches.append(self.c.llm_cache.batch(project_id, conn))
                        inputs = await self._inputs(conn, project_id, current)
                        prepared = await self._prepare(project_id, current, *inputs, batch=batches[-1])
                    report = await self._apply(conn, project_id, document_ids, prepared)
                await store_parsed(self.c.db, project_id, inputs[0])
                return report
            finally:
                for batch in batches:
                    await batch.flush_best_effort("deletion")

    @staticmethod
    async def _check_documents(
        conn: AsyncConnection, project_id: str, document_ids: tuple[str, ...], *, lock: bool
    ) -> None:
        """404 for a missing document, 409 for one still processing; with `lock`, the document rows stay
        locked until the transaction ends."""
        await require_project(conn, project_id)
        docs = await repo.lock_documents(conn, project_id, document_ids, lock=lock)
        missing = [d for d in document_ids if d not in docs]
        if len(missing) == 1:
            raise document_not_found(missing[0])
        if missing:
            raise NotFound(f"Documents not found: {', '.join(missing)[:1000]}", code="document_not_found")
        busy = [d for d in document_ids if docs[d]["status"] == "processing"]
        if busy:
            which = f"Document '{busy[0]}' is" if len(busy) == 1 else f"Documents {', '.join(busy)[:1000]} are"
            raise Conflict(
                f"{which} still processing; delete when finished (or cancel first)", code="document_processing"
            )

    async def _snapshot(self, conn: AsyncConnection, project_id: str, document_ids: tuple[str, ...]) -> Snapshot:
        """Everything the rebuild depends on; read under the key locks (locked_keys) it stays true until
        commit if its keys are all within the locked ones."""
        keys, pairs = await repo.keys_of_documents(conn, project_id, document_ids)
        return Snapshot(
            keys=_keys_of(keys, pairs),
            doc_chunks=await repo.chunks_of_documents(conn, project_id, document_ids),
            entities=await graph_repo.fetch_entities(conn, project_id, keys),
            relations=await graph_repo.fetch_relations(conn, project_id, pairs),
        )

    async def _inputs(self, conn: AsyncConnection, project_id: str, snap: Snapshot) -> tuple[RebuildInputs, str]:
        """The records of the chunks the rebuild reads (stored, else parsed from the cache) and the language."""
        needed = chunks_needed(snap.entities, snap.relations, snap.gone, self.settings)
        project = await self._project_settings(conn, project_id)
        inputs = await read_inputs(conn, project_id, needed, project.entity_types, self.settings.entity_name_max_length)
        # names map through the aliases entity resolution recorded, as the merge mapped them
        inputs.extractions = await resolved_extractions(conn, project_id, inputs.extractions)
        return inputs, project.language

    async def _prepare(
        self, project_id: str, snap: Snapshot, inputs: RebuildInputs, language: str, *, batch: CacheBatch | None = None
    ) -> Prepared:
        """The plan with its summaries and vectors. Summaries go through `batch` (one cache prefetch, one
        write) — without one, through a new batch on pooled connections, flushed by the caller."""
        if batch is None:
            batch = self.c.llm_cache.batch(project_id)
            async with batch.flushed_on_failure():
                return await self._planned(project_id, snap, inputs, language, batch)
        return await self._planned(project_id, snap, inputs, language, batch)

    async def _planned(
        self, project_id: str, snap: Snapshot, inputs: RebuildInputs, language: str, batch: CacheBatch
    ) -> Prepared:
        plan = plan_rebuild(snap.entities, snap.relations, snap.gone, inputs.extractions, self.settings)
        ent_rows, rel_rows = await self.summarised_rows(
            project_id, plan, snap.entities, snap.relations, inputs.paths, language, batch
        )
        vectors = await self.embeddings(snap.entities, snap.relations, ent_rows, rel_rows)
        return Prepared(snap, plan, ent_rows, rel_rows, vectors, batch)

    async def _apply(
        self, conn: AsyncConnection, project_id: str, document_ids: tuple[str, ...], p: Prepared
    ) -> BatchDeletion:
        plan = p.plan
        cascaded = await repo.pairs_touching(conn, project_id, plan.delete_entities)
        await repo.set_degrees_here(conn)  # written below with the rebuilt rows, not once more by the trigger
        await repo.delete_documents(conn, project_id, document_ids)
        await repo.delete_relations(conn, project_id, plan.delete_relations)
        await curation_repo.delete_entities(conn, project_id, plan.delete_entities)
        # one rewrite per row, its new vector and degree included (the rows exist: read under the locks)
        await repo.update_rebuilt_entities(conn, project_id, p.ent_rows, p.vectors[0])
        await repo.update_rebuilt_relations(conn, project_id, p.rel_rows, p.vectors[1])
        rewritten = set(plan.delete_entities) | {r["key"] for r in p.ent_rows}
        await repo.recount_degrees(
            conn,
            project_id,
            {key for pair in (*plan.delete_relations, *cascaded) for key in pair if key not in rewritten},
        )
        await cache_repo.delete_unreferenced(
            conn, project_id, [k for c in p.snapshot.doc_chunks for k in c.extraction_cache_keys]
        )
        return BatchDeletion(
            document_ids=list(document_ids),
            chunks_deleted=len(p.snapshot.doc_chunks),
            entities_deleted=len(plan.delete_entities),
            entities_rebuilt=len(p.ent_rows),
            relations_deleted=len(set(plan.delete_relations) | set(cascaded)),
            relations_rebuilt=len(p.rel_rows),
            llm_calls=LLMCalls(extract=0, summary=0),
        )

    async def _project_settings(self, conn: AsyncConnection, project_id: str) -> EffectiveSettings:
        row = await projects_repo.get(conn, project_id)
        return effective_settings(self.settings, row.settings if row else None)

    async def summarised_rows(
        self,
        project_id: str,
        plan: RebuildPlan,
        ents: dict[str, EntityRow],
        rels: dict[Pair, RelationRow],
        paths: dict[str, str],
        language: str,
        batch: CacheBatch,
    ) -> tuple[list[dict], list[dict]]:
        """Rows to write: rebuilt items (summarised exactly as ingestion would, so its summary cache applies)
        and, for items without cached records, their current text with the shrunk source lists."""
        s = self.summarizer
        if self.settings.enable_llm_cache_for_extract:
            await batch.prefetch(
                [
                    key
                    for key in (
                        *(s.first_call_key("entity", m.name, m.fragments, language) for m in plan.entities),
                        *(
                            s.first_call_key("relation", f"({m.src_name}, {m.tgt_name})", m.fragments, language)
                            for m in plan.relations
                        ),
                    )
                    if key
                ]
            )

        async def entity_text(m: EntityMerge) -> str:
            if not s.needs_llm(m.fragments):
                return m.description
            return await s.summarize("entity", m.name, m.fragments, language, project_id=project_id, batch=batch)

        async def relation_text(m: RelationMerge) -> str:
            if not s.needs_llm(m.fragments):
                return m.description
            return await s.summarize(
                "relation", f"({m.src_name}, {m.tgt_name})", m.fragments, language, project_id=project_id, batch=batch
            )

        ent_texts, rel_texts = await asyncio.gather(
            asyncio.gather(*(entity_text(m) for m in plan.entities)),
            asyncio.gather(*(relation_text(m) for m in plan.relations)),
        )
        ent_rows = [{**m.row(), "description": text} for m, text in zip(plan.entities, ent_texts, strict=True)]
        rel_rows = [{**m.row(), "description": text} for m, text in zip(plan.relations, rel_texts, strict=True)]
        ent_rows += [self._kept_entity_row(ents[k], left, paths, plan) for k, left in plan.stale_entities.items()]
        rel_rows += [self._kept_relation_row(rels[p], left, paths, plan) for p, left in plan.stale_relations.items()]
        return ent_rows, rel_rows

    def _kept_entity_row(self, row: EntityRow, remaining: list[str], paths: dict[str, str], plan: RebuildPlan) -> dict:
        """The entity's current text (less what only deleted chunks said) with its provenance fields recomputed."""
        return {
            "key": row.key,
            "name": row.name,
            "entity_type": row.entity_type,
            "description": plan.kept_entity_texts.get(row.key, row.description),
            **self._kept_sources(remaining, self.settings.max_source_ids_per_entity, paths),
        }

    def _kept_relation_row(
        self, row: RelationRow, remaining: list[str], paths: dict[str, str], plan: RebuildPlan
    ) -> dict:
        return {
            "src_key": row.src_key,
            "tgt_key": row.tgt_key,
            "keywords": row.keywords,
            "description": plan.kept_relation_texts.get(row.pair, row.description),
            "weight": row.weight,
            **self._kept_sources(remaining, self.settings.max_source_ids_per_relation, paths),
        }

    def _kept_sources(self, remaining: list[str], cap: int, paths: dict[str, str]) -> dict:
        """Source ids, file paths and truncation note from the remaining provenance."""
        method = limit_method(self.settings)
        limited = limit_sources(remaining, cap, method)
        file_paths = merge_file_paths([], [paths.get(c) for c in limited], self.settings.max_file_paths, method)
        return {
            "source_ids": limited,
            "file_paths": file_paths,
            "truncate": truncate_note(len(remaining), len(limited), method),
        }

    async def embeddings(
        self, ents: dict[str, EntityRow], rels: dict[Pair, RelationRow], ent_rows: list[dict], rel_rows: list[dict]
    ) -> tuple[list[EntityEmbeddingUpdate], list[RelationEmbeddingUpdate]]:
        """Vectors for rebuilt items whose embedded text changed."""
        # the stored display names and embedded hashes, with the rebuilt text
        ent_items = [replace(EntityText.of(ents[row["key"]]), description=row["description"]) for row in ent_rows]
        rel_items = [
            replace(
                RelationText.of(rels[(row["src_key"], row["tgt_key"])]),
                keywords=row["keywords"],
                description=row["description"],
            )
            for row in rel_rows
        ]
        return await embed_changed(self.c.embedder, ent_items, rel_items)
