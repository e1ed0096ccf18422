"""A processing document's visible progress (stage, chunks, LLM calls and tokens so far) and its
cancellation.

Progress is written in the background, at most once per PROGRESS_WRITE_INTERVAL per document, never per
chunk or per call; each write also reads whether the document's cancellation was asked. A cancel request
reaches a running document through that write, the worker's heartbeat or (in-process worker) at once;
the document then stops at its next check: between stages, or at once while it extracts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable
from typing import TypeVar

from app.core.usage import Usage
from app.db.engine import Database
from app.repositories import documents as docs_repo

log = logging.getLogger(__name__)

T = TypeVar("T")
# Stages of a claimed document, in order. Files are parsed by the upload request, before the document exists.
STAGES = ("chunking", "extracting", "merging", "summarising", "embedding")


class DocumentCancelled(Exception):
    """The document's cancellation was asked: it stops before anything of it is merged."""


class Progress:
    def __init__(
        self, db: Database, project_id: str, document_id: str, worker_id: str, usage: Usage, interval: float
    ) -> None:
        self.db = db
        self.project_id, self.document_id, self.worker_id = project_id, document_id, worker_id
        self.usage = usage
        self.interval = interval
        self.stage = STAGES[0]
        self.chunks_total = 0
        self.chunks_done = 0
        self.unembedded: list[str] = []  # inputs the embedding endpoint refused: reported on the document
        self.cancelled = asyncio.Event()
        self._dirty = asyncio.Event()
        self._writer: asyncio.Task | None = None

    def figures(self) -> dict:
        """The `progress` stored on the document: this attempt's figures so far."""
        u = self.usage
        return {
            "chunks_total": self.chunks_total,
            "chunks_done": self.chunks_done,
            "llm_calls": u.llm_calls,
            "llm_prompt_tokens": u.prompt_tokens,
            "llm_completion_tokens": u.completion_tokens,
            "embedding_tokens": u.embedding_tokens,
        }

    def enter(self, stage: str) -> None:
        self.stage = stage
        self._dirty.set()

    def chunked(self, total: int) -> None:
        self.chunks_total = total
        self._dirty.set()

    def chunk_done(self) -> None:
        self.chunks_done += 1
        self._dirty.set()

    def check(self) -> None:
        """Between stages: stop here if the cancellation was asked."""
        if self.cancelled.is_set():
            raise DocumentCancelled(self.document_id)

    async def until_cancelled(self, work: Awaitable[T]) -> T:
        """Await `work`, but stop it as soon as the cancellation is asked (its cached answers so far are
        written by the extraction's own failure handling) and raise DocumentCancelled."""
        task = asyncio.ensure_future(work)
        waiter = asyncio.ensure_future(self.cancelled.wait())
        try:
            done, _ = await asyncio.wait((task, waiter), return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            task.cancel()
            raise
        finally:
            waiter.cancel()
        if task in done:
            return task.result()
        task.cancel()
        await asyncio.wait((task,))
        if not task.cancelled():
            task.exception()  # marks it retrieved: the cancellation is what is reported
        raise DocumentCancelled(self.document_id)

    async def __aenter__(self) -> Progress:
        self._dirty.set()
        self._writer = asyncio.create_task(self._write_loop(), name=f"progress-{self.document_id}")
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._writer is not None:
            self._writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._writer

    async def _write_loop(self) -> None:
        while True:
            await self._dirty.wait()
            self._dirty.clear()
            await self.write()
            await asyncio.sleep(self.interval)

    async def write(self) -> None:
        """Best effort: progress is informative, a failed write must not fail the document."""
        try:
            async with self.db.transaction() as conn:
                asked = await docs_repo.set_progress(
                    conn, self.project_id, self.document_id, self.worker_id, self.stage, self.figures()
                )
        except Exception as exc:
            log.debug("progress of %s/%s not written: %s", self.project_id, self.document_id, type(exc).__name__)
            return
        if asked:
            self.cancelled.set()
