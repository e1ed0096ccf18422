"""Processing of a queued update (a document row whose `update_of` names the document it updates).

chunk the new text against the current chunks (app/domain/chunk_diff.py) → store and extract only the new
chunks, under the update's own row, where no query sees them → swap: in one transaction, under the locks
of every key the removed chunks supported and every key the new chunks name, remove the removed chunks'
contributions as a deletion would (app/services/update/removal.py), give the kept and new chunks to the
document at their new positions, merge the new chunks' records with the ingestion merge rules and make the
new text the document's current version → summarise and embed what the merge touched, as ingestion does →
with ENTITY_RESOLUTION auto or llm, the final pass of resolution over the document's nodes, as after an
ingestion (app/services/ingest/absorb.py::Absorber.review): earlier nodes the new text's full names absorb,
standing merges it makes ambiguous or contradicts undone. So a name the update brings resolves as it would had
the new text come in as a document. The swap marks the update's row as owing that review (`review_owed`, with
`graph_merged`); a retry after the swap runs it on what is stored, and an update failed for good after the
swap is reviewed by a worker's sweep (app/services/ingest/review_sweep.py), always over the updated document.

Until the swap commits the document answers with its previous version; a failed or cancelled update leaves
it so (its new chunks stay on the update's row for a retry and go when the update is deleted or replaced).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection

from app.core.errors import Conflict
from app.db.errors import is_deadlock
from app.domain.absorption import related_forms
from app.domain.chunk_diff import ChunkDiff, diff_chunks
from app.domain.chunking import chunk_id
from app.domain.document_rows import DocumentRow
from app.domain.merge_rules import UNKNOWN_SOURCE
from app.domain.records import ChunkExtraction
from app.domain.resolution import MERGING_MODES
from app.domain.rows import ChunkRow
from app.repositories import chunks as chunks_repo
from app.repositories import deletion as deletion_repo
from app.repositories import document_versions as versions_repo
from app.repositories import documents as docs_repo
from app.services.deletion.service import Prepared
from app.services.graph.gate import entity_gate, locked_keys
from app.services.ingest.extraction import store_report
from app.services.ingest.graph_merge import ClaimLost, Touched, require_claim
from app.services.ingest.intake import content_hash
from app.services.ingest.name_resolution import NameResolution, Relock
from app.services.ingest.progress import DocumentCancelled, Progress
from app.services.ingest.reporting import stage
from app.services.projects import ProjectService
from app.services.update.removal import ChunkRemoval

if TYPE_CHECKING:
    from app.services.ingest.pipeline import DocumentPipeline

log = logging.getLogger(__name__)
_DEADLOCK_RETRIES = 3  # swaps the server aborted to break a deadlock, tried again


class _Outdated(Exception):
    """What the swap depends on moved outside the locks taken: take them again, with the new keys."""


@dataclass
class _Swap:
    project_id: str
    update_id: str
    target_id: str
    worker_id: str
    version: int  # the version the diff was made against
    text: str
    file_path: str | None
    diff: ChunkDiff
    new_ids: list[str]  # chunk id of each diff.chunks entry
    extractions: list[ChunkExtraction]


class UpdateRunner:
    def __init__(self, pipeline: DocumentPipeline) -> None:
        self.pipeline = pipeline
        self.c = pipeline.c
        self.removal = ChunkRemoval(pipeline.c)

    async def run(
        self, doc: DocumentRow, worker_id: str, progress: Progress, on_merged: Callable[[], None] | None = None
    ) -> None:
        project_id, target_id = doc.project_id, doc.update_of
        assert target_id is not None  # the pipeline hands over update rows only
        project = await ProjectService(self.c).overrides(project_id)
        # two writings of a person's name the new chunks relate (absorb.py); None: an earlier attempt swapped, so
        # the final pass reads them from the document's stored records
        related: set[tuple[str, str]] | None = None
        if doc.graph_merged:  # an earlier attempt swapped: finish what it touched
            touched = await self.pipeline.finaliser.read_touched(project_id, target_id)
        else:
            touched, related = await self._prepare_and_swap(doc, worker_id, progress, project)
        if on_merged is not None:
            on_merged()
        try:
            await self.pipeline.finaliser.finalise(
                project_id, target_id, project.language, touched, progress.enter, progress.unembedded
            )
        except Exception:
            await self.pipeline.finaliser.embed_stored(project_id, touched)
            raise
        finally:
            self.pipeline.last_writers.release(touched)
        if self.c.settings.entity_resolution in MERGING_MODES:  # also when an earlier attempt swapped
            with stage("absorb", self.pipeline.timings):
                await self.pipeline.absorber.review(
                    project_id, target_id, self.pipeline.undo_merge, touched.nodes(), related
                )

    async def _prepare_and_swap(
        self, doc: DocumentRow, worker_id: str, progress: Progress, project
    ) -> tuple[Touched, set[tuple[str, str]]]:
        """The swap's touched items, and the related forms of the new chunks' records (for the final pass)."""
        project_id, update_id, target_id = doc.project_id, doc.id, doc.update_of
        assert target_id is not None and doc.content is not None  # an update row, read with its content
        async with self.c.db.connect() as conn:
            target = await docs_repo.get(conn, project_id, target_id, content=True)
            old = await versions_repo.old_chunks(conn, project_id, target_id)
        if target is None or target.content is None:
            raise ClaimLost(update_id)  # deleted: its updates went with it
        progress.check()
        tokenizer = self.c.tokenizer
        with stage("chunk", self.pipeline.timings):
            chunker = self.pipeline.chunker(project)
            diff = await asyncio.to_thread(
                diff_chunks, target.content, old, doc.content, chunker, lambda t: len(tokenizer.encode(t))
            )
            new_ids = [c.reused or chunk_id(update_id, c.chunk.order_index) for c in diff.chunks]
            added = [
                ChunkRow.of(cid, c.chunk, doc.file_path)
                for c, cid in zip(diff.chunks, new_ids, strict=True)
                if c.reused is None
            ]
            async with self.c.db.transaction() as conn:
                await require_claim(conn, project_id, update_id, worker_id)
                await chunks_repo.replace_for_document(conn, project_id, update_id, added)
                await docs_repo.set_fields(conn, project_id, update_id, chunks_count=len(diff.chunks))
        progress.chunked(len(added))
        progress.check()
        progress.enter("extracting")
        file_path = doc.file_path or UNKNOWN_SOURCE
        extractions = await progress.until_cancelled(
            self.pipeline._embed_and_extract(project_id, update_id, added, file_path, project, progress)
        )
        await store_report(self.c.db, project_id, update_id, worker_id, extractions)
        progress.check()
        progress.enter("merging")
        swap = _Swap(
            project_id,
            update_id,
            target_id,
            worker_id,
            target.version,
            doc.content,
            doc.file_path,
            diff,
            new_ids,
            extractions,
        )
        with stage("merge", self.pipeline.timings):
            touched = await self._swap(swap)
        return touched, related_forms(extractions)

    async def _swap(self, s: _Swap) -> Touched:
        """Attempts until one writes; each plans the removal outside the locks, then locks and writes."""
        extra: set[str] = set()
        resolution: NameResolution | None = None
        mode = self.c.settings.entity_resolution
        deadlocks = 0
        while True:
            async with self.c.db.connect() as conn:
                snapshot = await self.removal.snapshot(conn, s.project_id, s.diff.removed)
                prepared = await self.removal.plan(conn, s.project_id, snapshot)
                if resolution is None and mode != "off":
                    resolution = await NameResolution.prepare(conn, mode, s.project_id, s.target_id, s.extractions)
            if resolution is not None:
                await self.pipeline.merger.judge.settle(s.project_id, resolution, report_of=s.update_id)
                async with self.c.db.connect() as conn:
                    await resolution.anticipate(conn)
            named = {k for x in s.extractions for k in (*(e.key for e in x.entities), *_ends(x))}
            keys = set(snapshot.keys) | named | extra | (resolution.lock_keys if resolution else set())
            try:
                async with entity_gate(self.c.db, s.project_id, keys):
                    return await self._write(s, keys, prepared, resolution)
            except (_Outdated, Relock):
                extra = keys | (resolution.lock_keys if resolution else set())
                log.info("update %s/%s: graph moved while planning; planning again", s.project_id, s.update_id)
            except DBAPIError as exc:  # aborted to break a deadlock (a deletion of the document, say): again
                deadlocks += 1
                if not is_deadlock(exc) or deadlocks > _DEADLOCK_RETRIES:
                    raise
                log.warning("update %s/%s: chosen as a deadlock victim; trying again", s.project_id, s.update_id)

    async def _write(self, s: _Swap, keys: set[str], prepared: Prepared, resolution: NameResolution | None) -> Touched:
        p = s.project_id
        batches = [prepared.batch]
        current_doc: DocumentRow | None = None

        async def claimed(conn: AsyncConnection) -> None:
            """Before the key locks: the document's row, then the update's (the order a deletion of the
            document takes them), and the update still current."""
            nonlocal current_doc
            if s.target_id not in await deletion_repo.lock_documents(conn, p, [s.target_id]):
                raise ClaimLost(s.update_id)
            claim = await require_claim(conn, p, s.update_id, s.worker_id)
            if claim.cancel_requested:
                raise DocumentCancelled(s.update_id)
            current_doc = await docs_repo.get(conn, p, s.target_id)
            if current_doc is None or current_doc.version != s.version:
                raise Conflict("the document changed while this update was processed", code="document_changed")

        try:
            async with locked_keys(self.c.db, p, keys, gate=False, first=claimed, step="merge") as conn:
                assert current_doc is not None  # set by `claimed`
                current = await self.removal.snapshot(conn, p, s.diff.removed)
                if not current.keys <= keys:
                    raise _Outdated
                if current != prepared.snapshot:  # rare: plan again here, summaries on this connection
                    batches.append(self.c.llm_cache.batch(p, conn))
                    prepared = await self.removal.plan(conn, p, current, batches[-1])
                extractions = s.extractions
                if resolution is not None:
                    await resolution.resolve_locked(conn)
                    extractions = resolution.apply(extractions)
                    await resolution.record(conn)
                removed = await self.removal.apply(conn, p, prepared)
                await versions_repo.place_chunks(
                    conn,
                    p,
                    s.target_id,
                    s.file_path,
                    [
                        {
                            "id": cid,
                            "order_index": c.chunk.order_index,
                            "start_token": c.chunk.start_token,
                            "end_token": c.chunk.end_token,
                        }
                        for c, cid in zip(s.diff.chunks, s.new_ids, strict=True)
                    ],
                )
                touched, idents = await self.pipeline.merger._merge_locked(conn, p, s.target_id, extractions)
                await self._record(conn, s, current_doc)
                # owing the final pass until the update's final write (or a sweep), as a document's merge marks it
                marks = {"review_owed": True} if self.c.settings.entity_resolution in MERGING_MODES else {}
                await docs_repo.set_fields(conn, p, s.update_id, graph_merged=True, **marks)
        finally:
            for batch in batches:
                await batch.flush_best_effort("update")
        self.pipeline.last_writers.wrote(touched, idents)
        log.info("update %s/%s applied: %s", p, s.update_id, removed)
        return touched

    async def _record(self, conn: AsyncConnection, s: _Swap, current: DocumentRow) -> None:
        """The new text becomes the current version; both versions are kept in the history."""
        p = s.project_id
        await versions_repo.record_version(
            conn,
            p,
            s.target_id,
            version=current.version,
            content_hash=current.content_hash,
            content_length=current.content_length,
            chunks_count=current.chunks_count,
            chunks_added=current.chunks_count,
            updated_at=current.updated_at,
        )
        new_hash = content_hash(s.text)
        owner = await versions_repo.owner_of_hash(conn, p, new_hash)
        if owner is not None and owner != s.target_id:
            raise Conflict(f"document '{owner}' has this content already", code="duplicate_content")
        await versions_repo.set_current(
            conn,
            p,
            s.target_id,
            content=s.text,
            content_hash=new_hash,
            content_length=len(s.text),
            chunks_count=len(s.diff.chunks),
            version=s.version + 1,
            file_path=s.file_path,
        )
        await versions_repo.record_version(
            conn,
            p,
            s.target_id,
            version=s.version + 1,
            content_hash=new_hash,
            content_length=len(s.text),
            chunks_count=len(s.diff.chunks),
            chunks_reused=s.diff.reused,
            chunks_added=len(s.diff.added),
            chunks_removed=len(s.diff.removed),
        )


def _ends(x: ChunkExtraction) -> list[str]:
    return [k for r in x.relations for k in (r.src_key, r.tgt_key)]
