"""Processing of one claimed document: chunk → store → embed chunks ∥ extract → merge → summarise → embed.

The merge (app/services/ingest/graph_merge.py) is one transaction, so a crash leaves the document's
contribution either complete or absent; `graph_merged` marks it, and a retried document that already
merged goes straight to finalisation (app/services/ingest/finalise.py: summaries, then embeddings).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from functools import partial

from app.container import Container
from app.core import metrics
from app.core.errors import first_failure
from app.core.usage import Usage, track_usage
from app.domain.absorption import related_forms
from app.domain.chunk_records import encode as encode_records
from app.domain.chunk_records import parse_fingerprint
from app.domain.chunking import Chunk, chunk_id, chunk_text
from app.domain.document_rows import DocumentRow
from app.domain.merge_rules import UNKNOWN_SOURCE
from app.domain.records import ChunkExtraction
from app.domain.resolution import MERGING_MODES
from app.domain.rows import ChunkRow
from app.repositories import chunk_records as chunk_records_repo
from app.repositories import chunks as chunks_repo
from app.repositories import documents as docs_repo
from app.repositories import pipeline_events as events_repo
from app.schemas.projects import EffectiveSettings
from app.services.graph.summaries import Summarizer
from app.services.ingest.absorb import Absorber, UndoMerge
from app.services.ingest.extraction import Extractor, store_report
from app.services.ingest.finalise import Finaliser
from app.services.ingest.graph_merge import ClaimLost, GraphMerger, Touched, require_claim
from app.services.ingest.last_writers import LastWriters
from app.services.ingest.progress import DocumentCancelled, Progress
from app.services.ingest.reporting import error_text, failure_reason, stage
from app.services.ingest.resolution_judge import ResolutionJudge
from app.services.ingest.review_sweep import ReviewSweep
from app.services.projects import ProjectService

log = logging.getLogger(__name__)

UpdateRun = Callable[[DocumentRow, str, Progress, Callable[[], None] | None], Awaitable[None]]

_EVENT_OF_STATUS = {"processed": "finished", "failed": "failed", "cancelled": "cancelled"}


class DocumentPipeline:
    def __init__(self, c: Container) -> None:
        self.c = c
        self.settings = c.settings
        self.extractor = Extractor(c.llm_cache, c.settings)
        self.summarizer = Summarizer(c.llm_cache, c.tokenizer, c.settings)
        self.timings: dict[str, float] = {}
        self.last_writers = LastWriters()
        self.merger = GraphMerger(
            c.db, c.settings, self.last_writers, ResolutionJudge(c.db, c.llm_cache, c.settings, c.embedder)
        )
        self.finaliser = Finaliser(c, self.summarizer, self.last_writers, self.timings)
        self.absorber = Absorber(c)
        self.reviews = ReviewSweep(c.db, self.absorber)  # of documents failed for good after their merge
        self.active: dict[tuple[str, str], Progress] = {}  # documents being processed, for cancel requests
        # runs a queued update of a document (a row with `update_of`); set by the worker, which builds
        # app/services/update/runner.py (that package uses this one, so this one cannot import it)
        self.run_update: UpdateRun | None = None
        # undoes an automatic merge a later document made ambiguous; set by the worker (app/services/merges
        # uses this package)
        self.undo_merge: UndoMerge | None = None

    def request_cancel(self, project_id: str, document_id: str) -> None:
        """The document's cancellation was asked (and recorded): stop it at once if it runs here."""
        progress = self.active.get((project_id, document_id))
        if progress is not None:
            progress.cancelled.set()

    async def process(
        self, project_id: str, document_id: str, worker_id: str, on_merged: Callable[[], None] | None = None
    ) -> str:
        """Run the document to `processed`, `failed` or `cancelled`; returns the final status ("lost" if
        taken over).

        `on_merged` is called once the document's graph merge is committed, before its summaries and
        embeddings: the worker then lets another document start extracting, so the LLM stays busy.
        """
        usage = Usage()
        progress = Progress(self.c.db, project_id, document_id, worker_id, usage, self.settings.progress_write_interval)
        self.active[(project_id, document_id)] = progress
        status, error = "processed", None
        try:
            async with progress:
                with track_usage(usage):
                    await self._run(project_id, document_id, worker_id, on_merged, progress)
        except ClaimLost:
            log.warning("document %s/%s: claim lost, leaving it to its new owner", project_id, document_id)
            return "lost"
        except DocumentCancelled:
            status, error = "cancelled", "cancelled on request"
            log.info("document %s/%s cancelled while %s", project_id, document_id, progress.stage)
        except Exception as exc:  # any failure ends the attempt with the reason kept
            status, error = "failed", failure_reason(exc, progress.stage)
            details = error_text(exc)  # the document shows a clean message; the log keeps the details
            log.warning(
                "document %s/%s failed: %s%s",
                project_id,
                document_id,
                error,
                "" if details in error else f" ({details})",
            )
        finally:
            self.active.pop((project_id, document_id), None)
        with stage("commit", self.timings):
            async with self.c.db.transaction() as conn:
                if not await docs_repo.finish(
                    conn, project_id, document_id, worker_id, status, error, usage, progress.figures(), progress.stage
                ):
                    return "lost"
                await events_repo.add(conn, [(project_id, document_id, _EVENT_OF_STATUS[status], error)])
                if status == "processed":
                    await docs_repo.set_unembedded(conn, project_id, document_id, progress.unembedded)
        metrics.PIPELINE_PROCESSED.labels(status).inc()
        return status

    async def _run(
        self,
        project_id: str,
        document_id: str,
        worker_id: str,
        on_merged: Callable[[], None] | None,
        progress: Progress,
    ) -> None:
        async with self.c.db.connect() as conn:
            doc = await docs_repo.get(conn, project_id, document_id, content=True)
        if doc is None:
            raise ClaimLost(document_id)
        assert doc.content is not None, "read with its content"
        if doc.update_of is not None:
            if self.run_update is None:
                raise RuntimeError("this process cannot apply document updates")
            await self.run_update(doc, worker_id, progress, on_merged)
            return
        file_path = doc.file_path or UNKNOWN_SOURCE
        project = await ProjectService(self.c).overrides(project_id)
        touched: Touched | None = None  # None: merged by an earlier attempt, read back from the database
        resolves = self.settings.entity_resolution in MERGING_MODES
        # two writings of a person's name the document relates (absorb.py); None: merged by an earlier attempt,
        # so the final pass reads them from the document's stored records
        related: set[tuple[str, str]] | None = None
        if not doc.graph_merged:
            progress.check()
            with stage("chunk", self.timings):
                pieces = await asyncio.to_thread(self.chunker(project), doc.content)
                rows = [ChunkRow.of(chunk_id(document_id, p.order_index), p, doc.file_path) for p in pieces]
                async with self.c.db.transaction() as conn:
                    await require_claim(conn, project_id, document_id, worker_id)
                    await chunks_repo.replace_for_document(conn, project_id, document_id, rows)
                    await docs_repo.set_fields(conn, project_id, document_id, chunks_count=len(rows))
            progress.chunked(len(rows))
            progress.check()
            progress.enter("extracting")
            extractions = await progress.until_cancelled(
                self._embed_and_extract(project_id, document_id, rows, file_path, project, progress)
            )
            await store_report(self.c.db, project_id, document_id, worker_id, extractions)
            progress.check()
            progress.enter("merging")
            with stage("merge", self.timings):  # refuses to merge, under the document's row lock, if cancelled
                texts = [r.content for r in sorted(rows, key=lambda r: r.order_index)]  # as stored just now
                touched = await self.merger.merge(
                    project_id, document_id, worker_id, extractions, texts, owes_review=resolves
                )
            if resolves:
                related = related_forms(extractions)
        if on_merged is not None:
            on_merged()
        if touched is None:  # an earlier attempt merged: read what it wrote; its chunk embeddings may be missing
            touched = await self.finaliser.read_touched(project_id, document_id)
            await self._embed_chunks(project_id, document_id, progress)
        try:
            await self.finaliser.finalise(
                project_id, document_id, project.language, touched, progress.enter, progress.unembedded
            )
        except Exception:
            await self.finaliser.embed_stored(project_id, touched)
            raise
        finally:  # a cancelled document is retried later, and its retry embeds whatever is stale among its items
            self.last_writers.release(touched)
        if resolves:  # also when an earlier attempt merged
            with stage("absorb", self.timings):
                await self.absorber.review(project_id, document_id, self.undo_merge, touched.nodes(), related)

    def chunker(self, project: EffectiveSettings) -> Callable[[str], list[Chunk]]:
        """The project's chunking of a text (size, overlap, split characters), as a plain function."""
        return partial(
            chunk_text,
            self.c.tokenizer,
            size=project.chunk_size,
            overlap=project.chunk_overlap_size,
            split_by=project.chunk_split_by_character,
            split_only=project.chunk_split_by_character_only,
        )

    # ----- extraction -----
    async def _embed_and_extract(
        self, project_id: str, document_id: str, rows: list[ChunkRow], file_path: str, project, progress: Progress
    ) -> list[ChunkExtraction]:
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(self._embed_chunks(project_id, document_id, progress))
                extracting = group.create_task(self._extract_all(project_id, rows, file_path, project, progress))
        except* Exception as errors:
            raise first_failure(errors) from None
        return extracting.result()

    async def _extract_all(
        self, project_id: str, rows: list[ChunkRow], file_path: str, project, progress: Progress
    ) -> list[ChunkExtraction]:
        with stage("extract", self.timings):
            batch = self.c.llm_cache.batch(project_id)
            if self.settings.enable_llm_cache_for_extract:
                await batch.prefetch(
                    [self.extractor.first_pass_key(row.content, project.entity_types, project.language) for row in rows]
                )

            async def extract(row: ChunkRow) -> tuple[ChunkExtraction, list[str]]:
                result = await self.extractor.extract_chunk(
                    project_id,
                    row.id,
                    row.content,
                    file_path,
                    entity_types=project.entity_types,
                    language=project.language,
                    max_gleaning=project.max_gleaning,
                    batch=batch,
                )
                progress.chunk_done()
                return result

            # a failure (or a cancellation) cancels the rest; the answers that arrived stay cached for a retry
            async with batch.flushed_on_failure(), asyncio.TaskGroup() as group:
                tasks = [group.create_task(extract(row)) for row in rows]
            results = [task.result() for task in tasks]
            async with self.c.db.transaction() as conn:
                await batch.flush(conn)
                await chunks_repo.set_extraction_keys(
                    conn, project_id, [(row.id, keys) for row, (_, keys) in zip(rows, results, strict=True)]
                )
                # the parsed records too, so deleting a document rebuilds without parsing answers again
                parsed_with = parse_fingerprint(project.entity_types, self.settings.entity_name_max_length)
                await chunk_records_repo.store(
                    conn,
                    project_id,
                    [
                        (row.id, encode_records(x, keys, parsed_with))
                        for row, (x, keys) in zip(rows, results, strict=True)
                    ],
                )
        return [extraction for extraction, _ in results]

    async def _embed_chunks(self, project_id: str, document_id: str, progress: Progress) -> None:
        """Embed the document's chunks that have none; a chunk the endpoint refuses stays without (found by
        full text only) and is reported, the others are embedded."""
        async with self.c.db.connect() as conn:
            pending = await chunks_repo.unembedded(conn, project_id, document_id)
        if not pending:
            return
        with stage("embed", self.timings):
            each = await self.c.embedder.embed_each([r.content for r in pending])
            progress.unembedded.extend(
                f"chunk {pending[i].order_index + 1} ({pending[i].id}): {reason}"
                for i, reason in sorted(each.refused.items())
            )
            async with self.c.db.transaction() as conn:
                await chunks_repo.set_embeddings(
                    conn, project_id, [(r.id, v) for r, v in zip(pending, each.vectors, strict=True) if v is not None]
                )
