"""Processing of one claimed document: chunk → store → embed chunks ∥ extract → merge → summarise → embed.

The merge is one transaction (advisory locks on every touched entity key, sorted), so a crash leaves the
document's contribution either complete or absent; `graph_merged` marks it, and a retried document that
already merged goes straight to finalisation. Summaries and embeddings are written compare-and-set, so
a concurrent document's newer merge is never overwritten (that document finalises it).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncConnection

from app import metrics
from app.container import Container
from app.domain.chunking import chunk_id, chunk_text
from app.domain.merge import UNKNOWN_SOURCE, EntityMerge, RelationMerge, endpoint_records, merge_entity, merge_relation
from app.domain.records import ChunkExtraction, EntityRecord, RelationRecord
from app.domain.texts import fragments, join_fragments
from app.errors import AppError, first_failure
from app.repositories import chunks as chunks_repo
from app.repositories import documents as docs_repo
from app.repositories import graph as graph_repo
from app.services.cached_llm import CacheBatch
from app.services.graph.embedding import embed_changed
from app.services.graph.summaries import Summarizer
from app.services.ingest.extraction import Extractor
from app.services.ingest.last_writers import LastWriters
from app.services.projects import ProjectService
from app.usage import Usage, track_usage

log = logging.getLogger(__name__)



class ClaimLost(Exception):
    """Another worker took the document over (our heartbeat went stale) or it was deleted."""


@contextmanager
def stage(name: str, timings: dict[str, float] | None = None) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        elapsed = time.perf_counter() - started
        metrics.PIPELINE_STAGE_SECONDS.labels(name).inc(elapsed)
        if timings is not None:
            timings[name] = timings.get(name, 0.0) + elapsed


def error_text(exc: BaseException) -> str:
    detail = exc.detail if isinstance(exc, AppError) else str(exc)
    return f"{type(exc).__name__}: {detail}"[:2000]


def fold_summary(current: str, summarised: str, summary: str) -> str | None:
    """The description after writing `summary` of `summarised`, or None when there is nothing to write.

    A document merged meanwhile only appends fragments, so `current` usually starts with the summarised
    ones: the summary replaces that prefix and the newer fragments stay (no summary call is wasted and
    nothing of the newer merge is lost). If the prefix is gone, the summary is dropped.
    """
    done, now = fragments(summarised), fragments(current)
    if not summary or now[:len(done)] != done:
        return None
    folded = join_fragments([summary, *now[len(done):]])
    return folded if folded != current else None


async def _lock_keys(conn: AsyncConnection, project_id: str, keys: Iterable[str], step: str) -> float:
    """Take the key locks (graph_repo.lock_keys), counting the wait; returns when they were obtained.

    Documents that share entities queue on these locks, so their wait and hold times (Prometheus
    pipeline_key_lock_seconds_total) show how much of ingestion is serialised by recurring entities.
    """
    started = time.perf_counter()
    await graph_repo.lock_keys(conn, project_id, keys)
    locked = time.perf_counter()
    metrics.KEY_LOCK_SECONDS.labels(step, "wait").inc(locked - started)
    return locked


def _released(step: str, locked: float) -> None:
    """Count the time the key locks were held, until the transaction ended."""
    metrics.KEY_LOCK_SECONDS.labels(step, "held").inc(time.perf_counter() - locked)


def _idents(project_id: str, keys: Iterable[str], pairs: Iterable[tuple]) -> list[tuple]:
    """Process-wide names of entities and relations (summary claims, last writers)."""
    return [("e", project_id, k) for k in keys] + [("r", project_id, tuple(p)) for p in pairs]


@dataclass(eq=False)  # compared by identity: it also names its document as a writer in LastWriters
class Touched:
    """A document's entities (by key) and relations (by pair) as it last saw them: name(s), description,
    keywords and embedded_hash, enough to decide summaries and embeddings without reading them back."""

    entities: dict[str, dict]
    relations: dict[tuple[str, str], dict]

    def replace(self, other: Touched) -> None:
        self.entities, self.relations = other.entities, other.relations


def _touched(entity_merges: list[EntityMerge], relation_merges: list[RelationMerge],
             existing: dict[str, dict], existing_rel: dict[tuple, dict]) -> Touched:
    names = {m.key: m.name for m in entity_merges}
    ents = {m.key: {"key": m.key, "name": m.name, "description": m.description,
                    "embedded_hash": (existing.get(m.key) or {}).get("embedded_hash")} for m in entity_merges}
    rels = {}
    for m in relation_merges:
        pair = (m.src_key, m.tgt_key)
        rels[pair] = {"src_key": m.src_key, "tgt_key": m.tgt_key, "src_name": names.get(m.src_key, m.src_name),
                      "tgt_name": names.get(m.tgt_key, m.tgt_name), "keywords": m.keywords,
                      "description": m.description,
                      "embedded_hash": (existing_rel.get(pair) or {}).get("embedded_hash")}
    return Touched(ents, rels)


class DocumentPipeline:
    def __init__(self, c: Container) -> None:
        self.c = c
        self.settings = c.settings
        self.extractor = Extractor(c.db, c.llm, c.settings)
        self.summarizer = Summarizer(c.db, c.llm, c.tokenizer, c.settings)
        self.timings: dict[str, float] = {}
        self._summarising: dict[tuple, asyncio.Event] = {}  # items being summarised by a document of this process
        self.last_writers = LastWriters()

    async def process(
        self, project_id: str, document_id: str, worker_id: str, on_merged: Callable[[], None] | None = None
    ) -> str:
        """Run the document to `processed` or `failed`; returns the final status ("lost" if taken over).

        `on_merged` is called once the document's graph merge is committed, before its summaries and
        embeddings: the worker then lets another document start extracting, so the LLM stays busy.
        """
        usage = Usage()
        status, error = "processed", None
        try:
            with track_usage(usage):
                await self._run(project_id, document_id, worker_id, on_merged)
        except ClaimLost:
            log.warning("document %s/%s: claim lost, leaving it to its new owner", project_id, document_id)
            return "lost"
        except Exception as exc:  # any failure ends the attempt with the reason kept
            status, error = "failed", error_text(exc)
            log.warning("document %s/%s failed: %s", project_id, document_id, error)
        with stage("commit", self.timings):
            async with self.c.db.transaction() as conn:
                if not await docs_repo.finish(conn, project_id, document_id, worker_id, status, error, usage):
                    return "lost"
        metrics.PIPELINE_PROCESSED.labels(status).inc()
        return status

    async def _run(
        self, project_id: str, document_id: str, worker_id: str, on_merged: Callable[[], None] | None
    ) -> None:
        async with self.c.db.connect() as conn:
            doc = await docs_repo.get(conn, project_id, document_id, content=True)
        if doc is None:
            raise ClaimLost(document_id)
        file_path = doc["file_path"] or UNKNOWN_SOURCE
        project = await ProjectService(self.c.db, self.settings).overrides(project_id)
        touched: Touched | None = None  # None: merged by an earlier attempt, read back from the database
        if not doc["graph_merged"]:
            with stage("chunk", self.timings):
                pieces = await asyncio.to_thread(
                    chunk_text, self.c.tokenizer, doc["content"], size=project.chunk_size,
                    overlap=project.chunk_overlap_size, split_by=project.chunk_split_by_character,
                    split_only=project.chunk_split_by_character_only,
                )
                rows = [{"id": chunk_id(document_id, p.order_index), "order_index": p.order_index,
                         "tokens": p.tokens, "start_token": p.start_token, "end_token": p.end_token,
                         "content": p.content, "file_path": doc["file_path"]} for p in pieces]
                async with self.c.db.transaction() as conn:
                    await self._require_claim(conn, project_id, document_id, worker_id)
                    await chunks_repo.replace_for_document(conn, project_id, document_id, rows)
                    await docs_repo.set_fields(conn, project_id, document_id, chunks_count=len(rows))
            try:
                async with asyncio.TaskGroup() as group:
                    group.create_task(self._embed_chunks(project_id, document_id))
                    extracting = group.create_task(self._extract_all(project_id, rows, file_path, project))
            except* Exception as errors:
                raise first_failure(errors) from None
            with stage("merge", self.timings):
                touched = await self._merge(project_id, document_id, worker_id, extracting.result())
        if on_merged is not None:
            on_merged()
        if touched is None:  # an earlier attempt merged: read what it wrote; its chunk embeddings may be missing
            touched = await self._read_touched(project_id, document_id)
            await self._embed_chunks(project_id, document_id)
        try:
            await self._finalise(project_id, document_id, project.language, touched)
        except Exception:
            await self._embed_stored(project_id, touched)
            raise
        finally:  # a cancelled document is retried later, and its retry embeds whatever is stale among its items
            self.last_writers.release(touched)

    async def _require_claim(self, conn, project_id: str, document_id: str, worker_id: str) -> dict:
        claim = await docs_repo.lock_claim(conn, project_id, document_id, worker_id)
        if claim is None:
            raise ClaimLost(document_id)
        return claim

    # ----- extraction -----
    async def _extract_all(self, project_id: str, rows: list[dict], file_path: str, project) -> list[ChunkExtraction]:
        with stage("extract", self.timings):
            batch = CacheBatch(self.c.db, project_id)
            if self.settings.enable_llm_cache_for_extract:
                await batch.prefetch([self.extractor.first_pass_key(row["content"], project.entity_types,
                                                                    project.language) for row in rows])
            async with batch.flushed_on_failure(), asyncio.TaskGroup() as group:  # a failure cancels the rest
                tasks = [group.create_task(self.extractor.extract_chunk(
                    project_id, row["id"], row["content"], file_path, entity_types=project.entity_types,
                    language=project.language, max_gleaning=project.max_gleaning, batch=batch,
                )) for row in rows]
            results = [task.result() for task in tasks]
            async with self.c.db.transaction() as conn:
                await batch.flush(conn)
                await chunks_repo.set_extraction_keys(
                    conn, project_id, [(row["id"], keys) for row, (_, keys) in zip(rows, results, strict=True)]
                )
        return [extraction for extraction, _ in results]

    # ----- merge -----
    async def _merge(
        self, project_id: str, document_id: str, worker_id: str, extractions: list[ChunkExtraction]
    ) -> Touched | None:
        """Merge the extractions into the graph in one transaction; the items as written (None if an
        earlier attempt had already merged)."""
        entity_records: dict[str, list[EntityRecord]] = {}
        relation_records: dict[tuple[str, str], list[RelationRecord]] = {}
        endpoint_sources: dict[str, list[str]] = {}
        all_relations: list[RelationRecord] = []
        for extraction in extractions:  # chunk order
            for ent in extraction.entities:
                entity_records.setdefault(ent.key, []).append(ent)
            for rel in extraction.relations:
                if rel.src_key == rel.tgt_key:
                    continue
                relation_records.setdefault((rel.src_key, rel.tgt_key), []).append(rel)
                all_relations.append(rel)
                for key in (rel.src_key, rel.tgt_key):
                    endpoint_sources.setdefault(key, []).append(rel.chunk_id)
        keys = set(entity_records) | set(endpoint_sources)

        async with self.c.db.transaction() as conn:
            claim = await self._require_claim(conn, project_id, document_id, worker_id)
            if claim["graph_merged"]:
                return None
            locked = await _lock_keys(conn, project_id, keys, "merge")
            existing = await graph_repo.fetch_entities(conn, project_id, sorted(keys))
            existing_rel = await graph_repo.fetch_relations(conn, project_id, sorted(relation_records))
            missing = keys - set(existing) - set(entity_records)
            for key, records in endpoint_records(all_relations, missing).items():
                entity_records[key] = records

            entity_merges: list[EntityMerge] = []
            for key in sorted(keys):
                row = existing.get(key)
                entity_merges.append(merge_entity(
                    row, entity_records.get(key, []), row["sources"] if row else [], self.settings,
                    extra_sources=endpoint_sources.get(key, ()),
                ))
            relation_merges: list[RelationMerge] = []
            for pair in sorted(relation_records):
                row = existing_rel.get(pair)
                relation_merges.append(
                    merge_relation(row, relation_records[pair], row["sources"] if row else [], self.settings)
                )

            written = [m for m in entity_merges if not m.skipped]
            await graph_repo.upsert_entities(conn, project_id, [m.row() for m in written])
            await graph_repo.upsert_relations(
                conn, project_id, [m.row() for m in relation_merges if not m.skipped]
            )
            await graph_repo.add_entity_sources(
                conn, project_id, [(m.key, c, document_id) for m in entity_merges for c in m.new_sources]
            )
            await graph_repo.add_relation_sources(
                conn, project_id,
                [(m.src_key, m.tgt_key, c, document_id) for m in relation_merges for c in m.new_sources],
            )
            await docs_repo.set_fields(conn, project_id, document_id, graph_merged=True)
        _released("merge", locked)
        touched = _touched(entity_merges, relation_merges, existing, existing_rel)
        self.last_writers.wrote(touched, _idents(
            project_id, [m.key for m in written],
            [(m.src_key, m.tgt_key) for m in relation_merges if not m.skipped]))
        return touched

    # ----- finalisation: summaries and embeddings -----
    async def _finalise(self, project_id: str, document_id: str, language: str, touched: Touched) -> None:
        """Summarise the document's over-threshold items, then embed the items whose text changed."""
        with stage("summarise", self.timings):
            ents, rels = await self._claim_summaries(project_id, document_id, touched)
            try:
                await self._summarise(project_id, ents, rels, language, touched)
            finally:
                self._release_summaries(project_id, ents, rels)
        with stage("embed", self.timings):
            should = self.last_writers.should_embed
            await self._embed_graph(
                project_id,
                {k: e for k, e in touched.entities.items() if should(touched, ("e", project_id, k))},
                {p: r for p, r in touched.relations.items() if should(touched, ("r", project_id, p))},
            )

    async def _embed_stored(self, project_id: str, touched: Touched) -> None:
        """After a failed finalisation, embed the stored text of the items the document was the last writer
        of: earlier documents skipped them for it, and nothing else would embed them until it is retried.
        Best effort: the document fails either way."""
        should = self.last_writers.should_embed
        keys = [k for k in touched.entities if should(touched, ("e", project_id, k))]
        pairs = [p for p in touched.relations if should(touched, ("r", project_id, p))]
        try:
            with stage("embed", self.timings):
                async with self.c.db.connect() as conn:
                    ents = await graph_repo.fetch_entities(conn, project_id, keys, with_sources=False)
                    rels = await graph_repo.fetch_relations(conn, project_id, pairs, with_sources=False)
                await self._embed_graph(project_id, ents, rels)
        except Exception as exc:
            log.warning("could not embed the items of a failed document in %s: %s", project_id, error_text(exc))

    async def _read_touched(self, project_id: str, document_id: str) -> Touched:
        async with self.c.db.connect() as conn:
            keys, pairs = await graph_repo.keys_of_document(conn, project_id, document_id)
            return Touched(await graph_repo.fetch_entities(conn, project_id, keys, with_sources=False),
                           await graph_repo.fetch_relations(conn, project_id, pairs, with_sources=False))

    async def _claim_summaries(self, project_id: str, document_id: str, touched: Touched) -> tuple[dict, dict]:
        """The document's entities and relations whose description needs an LLM summary, claimed in this process.

        Documents sharing an entity finalise concurrently; without this both would summarise it (the second
        summary wasted). An item another document is summarising is waited for and re-read: once its summary
        is folded in, it is usually below the threshold again (official trigger semantics unchanged).
        """
        s = self.summarizer
        idents = _idents(project_id, touched.entities, touched.relations)
        while True:
            busy = {self._summarising[i] for i in idents if i in self._summarising}
            if busy:
                await asyncio.gather(*(event.wait() for event in busy))
                touched.replace(await self._read_touched(project_id, document_id))
                continue
            ents = {k: e for k, e in touched.entities.items() if s.needs_llm(fragments(e["description"]))}
            rels = {p: r for p, r in touched.relations.items() if s.needs_llm(fragments(r["description"]))}
            for ident in _idents(project_id, ents, rels):
                self._summarising[ident] = asyncio.Event()
            return ents, rels

    def _release_summaries(self, project_id: str, ents: dict, rels: dict) -> None:
        for ident in _idents(project_id, ents, rels):
            event = self._summarising.pop(ident, None)
            if event is not None:
                event.set()

    async def _summarise(self, project_id: str, ents: dict, rels: dict, language: str, touched: Touched) -> None:
        """Summarise the given (claimed, over-threshold) items, fold the summaries in, and update `touched`."""
        s = self.summarizer
        ent_todo, rel_todo = list(ents.values()), list(rels.values())
        if not ent_todo and not rel_todo:
            return
        jobs = [("entity", e["name"], fragments(e["description"])) for e in ent_todo]
        jobs += [("relation", f"({r['src_name']}, {r['tgt_name']})", fragments(r["description"])) for r in rel_todo]
        batch = CacheBatch(self.c.db, project_id)
        if self.settings.enable_llm_cache_for_extract:
            await batch.prefetch([key for job in jobs if (key := s.first_call_key(*job, language))])
        try:  # a failure cancels the other summaries, so none writes to the batch after its flush
            async with batch.flushed_on_failure(), asyncio.TaskGroup() as group:
                tasks = [group.create_task(s.summarize(*job, language, project_id=project_id, batch=batch))
                         for job in jobs]
        except* Exception as errors:
            raise first_failure(errors) from None
        summaries = [task.result() for task in tasks]
        ent_new, rel_new = summaries[:len(ent_todo)], summaries[len(ent_todo):]
        ent_done = {e["key"]: (e["description"], new) for e, new in zip(ent_todo, ent_new, strict=True)}
        rel_done = {(r["src_key"], r["tgt_key"]): (r["description"], new)
                    for r, new in zip(rel_todo, rel_new, strict=True)}
        async with self.c.db.transaction() as conn:
            await batch.flush(conn)
            # every write to graph rows happens under the key locks, so row locks never interleave (no deadlock)
            locked = await _lock_keys(conn, project_id, [*ent_done, *(k for pair in rel_done for k in pair)],
                                      "summarise")
            current_e = await graph_repo.fetch_entities(conn, project_id, list(ent_done), with_sources=False)
            current_r = await graph_repo.fetch_relations(conn, project_id, list(rel_done), with_sources=False)
            ent_rows = [(key, row["description"], text) for key, row in sorted(current_e.items())
                        if (text := fold_summary(row["description"], *ent_done[key])) is not None]
            rel_rows = [(*pair, row["description"], text) for pair, row in sorted(current_r.items())
                        if (text := fold_summary(row["description"], *rel_done[pair])) is not None]
            await graph_repo.set_entity_descriptions(conn, project_id, ent_rows)
            await graph_repo.set_relation_descriptions(conn, project_id, rel_rows)
        _released("summarise", locked)
        self.last_writers.wrote(touched, _idents(project_id, [r[0] for r in ent_rows],
                                                         [(r[0], r[1]) for r in rel_rows]))
        # what the rows hold now (read under the locks, plus our folds): what the embedding must describe
        touched.entities.update(current_e)
        touched.relations.update(current_r)
        for key, _, text in ent_rows:
            touched.entities[key]["description"] = text
        for src, tgt, _, text in rel_rows:
            touched.relations[(src, tgt)]["description"] = text

    async def _embed_graph(self, project_id: str, ents: dict, rels: dict) -> None:
        ent_done, rel_done = await embed_changed(self.c.embedder, ents.values(), rels.values())
        if not ent_done and not rel_done:
            return
        ent_rows = sorted(((d.item["key"], d.item["description"], d.vector, d.text_hash) for d in ent_done),
                          key=lambda r: r[0])
        rel_rows = sorted(((d.item["src_key"], d.item["tgt_key"], d.item["description"], d.item["keywords"],
                            d.vector, d.text_hash) for d in rel_done), key=lambda r: r[:2])
        async with self.c.db.transaction() as conn:
            locked = await _lock_keys(conn, project_id, [r[0] for r in ent_rows] + [k for r in rel_rows
                                                                                    for k in r[:2]], "embed")
            await graph_repo.set_entity_embeddings(conn, project_id, ent_rows)
            await graph_repo.set_relation_embeddings(conn, project_id, rel_rows)
        _released("embed", locked)

    async def _embed_chunks(self, project_id: str, document_id: str) -> None:
        async with self.c.db.connect() as conn:
            pending = [r for r in await chunks_repo.list_for_document(conn, project_id, document_id)
                       if not r["embedded"]]
        if not pending:
            return
        with stage("embed", self.timings):
            vectors = await self.c.embedder.embed([r["content"] for r in pending])
            async with self.c.db.transaction() as conn:
                await chunks_repo.set_embeddings(
                    conn, project_id, [(r["id"], v) for r, v in zip(pending, vectors, strict=True)]
                )
