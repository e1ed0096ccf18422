"""Queue worker: claims documents (FOR UPDATE SKIP LOCKED), runs up to MAX_PARALLEL_INSERT at once,
heartbeats its claims, and gives unfinished work back to the queue on shutdown.

Runs inside the API process (settings.worker_enabled) or standalone: `python -m app.worker`. Any number
of workers may share one database. Each worker heartbeats itself (the `workers` table) and its claims; a
worker that dies misses its heartbeats and, after three of its intervals, its claims are retaken by the
others (up to WORKER_MAX_ATTEMPTS claims, then the document is marked failed). A claim whose document alone
stopped being heartbeated (its task ended without its final write) is retaken after WORKER_CLAIM_TIMEOUT.
A live worker's claims are never taken however slow its documents are: its liveness beats on a thread of its
own (app/worker/liveness.py), so even a busy event loop does not make it look dead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import uuid

from app.container import Container
from app.core import metrics
from app.core.config import Settings
from app.core.errors import AppError
from app.core.logging_setup import document_var, project_var
from app.db.errors import is_connection_error
from app.domain.name_sounds import load_name_lists
from app.domain.resolution import MERGING_MODES
from app.repositories import document_claims as claims_repo
from app.repositories import documents as docs_repo
from app.repositories import pipeline_events as events_repo
from app.repositories import workers as workers_repo
from app.repositories.resolution_ledger import ShortFormMerge
from app.schemas.merges import UnmergeRequest
from app.services.ingest.pipeline import DocumentPipeline
from app.services.merges.unmerge import UnmergeService
from app.services.update.runner import UpdateRunner
from app.wiring import build_container, close_container
from app.worker.liveness import LivenessBeat

log = logging.getLogger(__name__)


class Worker:
    def __init__(self, container: Container, worker_id: str | None = None) -> None:
        self.c = container
        self.settings = container.settings
        self.id = worker_id or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.pipeline = DocumentPipeline(container)
        self.pipeline.run_update = UpdateRunner(self.pipeline).run
        self.pipeline.undo_merge = self._undo_merge
        self.processed = 0
        self._tasks: dict[tuple[str, str], asyncio.Task] = {}
        # merged documents only summarise and embed: they leave their extraction slot to the next document
        self._finalising: set[tuple[str, str]] = set()
        self._wake = asyncio.Event()
        self._changed = asyncio.Event()
        self._stopping = False
        self._loops: list[asyncio.Task] = []
        # the worker's own liveness (workers table) beats on a thread: see app/worker/liveness.py
        self._beat = LivenessBeat(container.db.url, self.id, self.heartbeat_interval)

    # ----- public -----
    def notify(self) -> None:
        """New work was enqueued: look for it now rather than at the next poll."""
        self._wake.set()

    def request_cancel(self, project_id: str, document_id: str) -> None:
        """The document's cancellation was recorded: if this worker runs it, stop it now."""
        self.pipeline.request_cancel(project_id, document_id)

    async def _undo_merge(self, project_id: str, merge: ShortFormMerge) -> None:
        """Undo an automatic merge of a short form a later document made ambiguous, or of an undefined acronym a
        later document defined otherwise (app/services/ingest/absorb.py): restored from the cached extractions,
        the ledger entry marked undone, the pair not rejected (it is kept apart by the ambiguity itself)."""
        request = UnmergeRequest(project_id=project_id, entry_id=merge.id, keep_apart=False)
        try:
            await UnmergeService(self.c).unmerge(merge.entity_key, request, entry_alone=merge.acronym)
        except AppError as exc:  # changed meanwhile: the next document naming either tries again
            log.info("could not undo the merge of %r into %r: %s", merge.merged_name, merge.entity_key, exc)

    async def wait_for_change(self, seconds: float) -> None:
        """Return when a document handled by this worker finished, or after `seconds`."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._changed.wait(), seconds)

    @property
    def in_flight(self) -> list[tuple[str, str]]:
        return list(self._tasks)

    @property
    def running(self) -> bool:
        """Started, not stopping, and its claim and heartbeat loops and liveness beat still going."""
        return (
            bool(self._loops)
            and not self._stopping
            and self._beat.alive
            and not any(loop.done() for loop in self._loops)
        )

    @property
    def heartbeat_interval(self) -> float:
        """Seconds between heartbeats: WORKER_HEARTBEAT_INTERVAL, at most a third of the claim timeout."""
        return min(self.settings.worker_heartbeat_interval, self.settings.worker_claim_timeout / 3)

    async def start(self) -> None:
        try:  # registered before its first claim; if the database is down, the first beat does it
            async with self.c.db.transaction() as conn:
                await workers_repo.seen(conn, self.id, self.heartbeat_interval)
        except Exception as exc:
            self._loop_failed("registration", exc)
        if self.settings.entity_resolution != "off":
            load_name_lists()
        self._beat.start()
        self._loops = [
            asyncio.create_task(self._claim_loop(), name=f"worker-claim-{self.id}"),
            asyncio.create_task(self._heartbeat_loop(), name=f"worker-heartbeat-{self.id}"),
            asyncio.create_task(self._sweep_loop(), name=f"worker-sweep-{self.id}"),
        ]
        log.info("worker %s started (max %d documents at once)", self.id, self.settings.max_parallel_insert)

    async def stop(self) -> None:
        """Graceful shutdown: stop claiming, cancel in-flight documents, hand them back as pending."""
        self._stopping = True
        self._wake.set()
        await self._beat.stop()
        for task in [*self._loops, *self._tasks.values()]:
            task.cancel()
        await asyncio.gather(*self._loops, *self._tasks.values(), return_exceptions=True)
        try:
            async with self.c.db.transaction() as conn:
                released = await claims_repo.release(conn, self.id)
                await workers_repo.forget(conn, self.id)
            if released:
                log.info("worker %s returned %d document(s) to the queue", self.id, released)
        except Exception:
            log.exception("worker %s could not release its claims; they will expire", self.id)

    # ----- loops -----
    async def _claim_loop(self) -> None:
        while not self._stopping:
            self._wake.clear()
            try:
                await self._fill()
            except Exception as exc:
                self._loop_failed("claiming", exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.settings.worker_poll_interval)

    async def _fill(self) -> None:
        s = self.settings
        while not self._stopping and self._has_room():
            async with self.c.db.transaction() as conn:
                row = await claims_repo.claim_next(conn, self.id, s.worker_claim_timeout, s.worker_max_attempts)
                if row is not None:
                    await events_repo.add(
                        conn,
                        [(row.project_id, row.id, "started", f"attempt {row.attempts} by worker {self.id}")],
                    )
            if row is None:
                return
            key = (row.project_id, row.id)
            self._tasks[key] = asyncio.create_task(self._run_one(key), name=f"document-{key[1]}")

    def _has_room(self) -> bool:
        """MAX_PARALLEL_INSERT documents extracting/merging, plus at most as many more finalising."""
        limit = self.settings.max_parallel_insert
        return len(self._tasks) - len(self._finalising) < limit and len(self._tasks) < 2 * limit

    def _merged(self, key: tuple[str, str]) -> None:
        self._finalising.add(key)
        self._wake.set()

    async def _run_one(self, key: tuple[str, str]) -> None:
        # this task's context only: everything logged while processing the document names it
        project_var.set(key[0])
        document_var.set(key[1])
        try:
            status = await self.pipeline.process(key[0], key[1], self.id, lambda: self._merged(key))
            self.processed += status in ("processed", "failed")
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("worker %s: unexpected error on %s/%s", self.id, *key)
        finally:
            self._tasks.pop(key, None)
            self._finalising.discard(key)
            self._wake.set()
            self._changed.set()
            self._changed = asyncio.Event()

    async def _heartbeat_loop(self) -> None:
        s = self.settings
        while not self._stopping:
            await asyncio.sleep(self.heartbeat_interval)
            try:
                async with self.c.db.transaction() as conn:
                    asked = await claims_repo.heartbeat(conn, self.id, list(self._tasks))
                async with self.c.db.transaction() as conn:
                    ended = await claims_repo.fail_abandoned(
                        conn, self.id, s.worker_claim_timeout, s.worker_max_attempts
                    )
                    await workers_repo.prune(conn, s.worker_claim_timeout)
                    await events_repo.add(conn, [(r.project_id, r.id, r.status, r.error) for r in ended])
                for key in asked:
                    self.request_cancel(*key)
                async with self.c.db.connect() as conn:
                    metrics.set_queue_gauges(await docs_repo.count_by_status(conn))
                    metrics.WORKERS_LIVE.set(await workers_repo.live_count(conn))
            except Exception as exc:
                self._loop_failed("heartbeat", exc)

    async def sweep_reviews(self) -> int:
        """The resolution review of documents owing it that no attempt is processing (failed for good after their
        merge: app/services/ingest/review_sweep.py); how many were reviewed. None with ENTITY_RESOLUTION off or
        suggest, whose documents run no final pass: what is owed (marked while another mode ran, or by migration
        0023) waits for a mode that runs it."""
        if self.settings.entity_resolution not in MERGING_MODES:
            return 0
        return await self.pipeline.reviews.sweep(self._undo_merge, self.settings.worker_claim_timeout)

    async def _sweep_loop(self) -> None:
        """At start, then at each heartbeat interval; apart from the heartbeats, which an undo must not hold up."""
        while not self._stopping:
            try:
                await self.sweep_reviews()
            except Exception as exc:
                self._loop_failed("sweeping", exc)
            await asyncio.sleep(self.heartbeat_interval)

    def _loop_failed(self, what: str, exc: Exception) -> None:
        """The loops outlive any error; a database outage gets one line per attempt, not a traceback per poll."""
        if is_connection_error(exc):
            log.warning("worker %s: %s failed, database unavailable (%s); retrying", self.id, what, type(exc).__name__)
        else:
            log.exception("worker %s: %s failed; retrying", self.id, what)


async def _connect_when_ready(settings: Settings, stop: asyncio.Event) -> Container | None:
    """Build the container, waiting (with backoff) while the database is unreachable; None if stopped."""
    delay = 1.0
    while not stop.is_set():
        try:
            return await build_container(settings)
        except Exception as exc:
            if not is_connection_error(exc):
                raise
            log.warning("database unreachable at start-up (%s); retrying in %.0f s", type(exc).__name__, delay)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)
            delay = min(delay * 2, 30.0)
    return None


async def _main() -> None:
    from app.core.config import settings_or_exit
    from app.core.logging_setup import configure_logging
    from app.core.process_gc import freeze_start_up_objects
    from app.worker.http import start_worker_http

    settings = settings_or_exit(needs_database=True)
    configure_logging(settings.log_level, settings.log_format)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    container = await _connect_when_ready(settings, stop)
    if container is None:
        return
    worker = Worker(container)
    await worker.start()
    listener = await start_worker_http(settings, container, lambda: worker.running, worker.id)
    freeze_start_up_objects()
    try:
        await stop.wait()
    finally:
        if listener is not None:
            await listener.close()
        await worker.stop()
        await close_container(container)
