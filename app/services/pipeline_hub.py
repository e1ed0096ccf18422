"""What GET /pipeline/events streams share: one database poll per followed project, whatever the number of
its followers, and the caps on how many streams are open (per API key, and in all in this process).

A project's poller reads its new events and its processing documents every PROGRESS_WRITE_INTERVAL and
keeps the newest events in memory; followers wake only when something changed and take what they lack
from there (or page it from the database when they are further behind). It stops with its last follower,
and ends every stream of its project when the project is deleted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter, deque
from collections.abc import Hashable

from app.core.error_codes import ErrorCode
from app.core.errors import AppError
from app.db.engine import Database
from app.domain.document_rows import InFlightDocument
from app.repositories import documents as docs_repo
from app.repositories import pipeline_events as events_repo
from app.repositories import projects as projects_repo

log = logging.getLogger(__name__)

PAGE = 200  # events read at once, by the poller and by a follower catching up
KEPT = events_repo.KEEP_PER_PROJECT  # events a poller keeps in memory


class TooManyStreams(AppError):
    status_code = 429
    code: ErrorCode = "too_many_streams"


def progress_state(row: InFlightDocument) -> tuple:
    """What a stream shows of a processing document (its heartbeat moves without anything to show)."""
    return row.stage, row.progress, row.cancel_requested, row.attempts


def _states(flying: list[InFlightDocument]) -> list[tuple]:
    return [(r.id, progress_state(r)) for r in flying]


class ProjectPoller:
    """A followed project as last read: its events with an id in (floor, cursor], its processing documents,
    and why its streams end, once they must. Nothing of it is meaningful before the first read (`polled`)."""

    def __init__(self, project_id: str) -> None:
        self.project_id = project_id
        self.polled = False
        self.floor = self.cursor = 0
        self.flying: list[InFlightDocument] = []
        self.ended: str | None = None
        self.followers = 0
        self.task: asyncio.Task | None = None
        self._events: deque[dict] = deque()
        self._changed = asyncio.Event()

    @property
    def changed(self) -> asyncio.Event:
        """Set at the next change; take it before reading the state, then wait on it."""
        return self._changed

    def since(self, after: int) -> list[dict]:
        """The kept events with an id larger than `after` (which is at least `floor`), oldest first."""
        newer = []
        for row in reversed(self._events):
            if row["id"] <= after:
                break
            newer.append(row)
        return newer[::-1]

    def read(self, rows: list[dict], flying: list[InFlightDocument]) -> None:
        """Take one poll's answer: new events (oldest first) and the processing documents."""
        moved = not self.polled or bool(rows) or _states(flying) != _states(self.flying)
        for row in rows:
            self._events.append(row)
            self.cursor = row["id"]
        while len(self._events) > KEPT:
            self.floor = self._events.popleft()["id"]
        self.flying = flying
        self.polled = True
        if moved:
            self._publish()

    def end(self, reason: str) -> None:
        self.ended = reason
        self._publish()

    def _publish(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def run(self, db: Database, interval: float) -> None:
        failing = False
        while True:
            try:
                async with db.connect() as conn:
                    if not await projects_repo.exists(conn, self.project_id):
                        self.end("project_deleted")
                        return
                    if not self.polled:
                        self.floor = self.cursor = await events_repo.last_id(conn, self.project_id)
                    rows: list[dict] = []
                    while True:  # a burst is read whole (the log keeps no more than KEPT of it anyway)
                        page = await events_repo.after(
                            conn, self.project_id, rows[-1]["id"] if rows else self.cursor, PAGE
                        )
                        rows += page
                        if len(page) < PAGE:
                            break
                    flying = await docs_repo.in_flight(conn, self.project_id)
            except Exception:  # the database is away: streams stay open and the next poll tries again
                if not failing:
                    log.warning("pipeline feed of project %s: poll failed", self.project_id, exc_info=True)
                failing = True
            else:
                failing = False
                self.read(rows, flying)
            await asyncio.sleep(interval)


class PipelineHub:
    def __init__(self) -> None:
        self._pollers: dict[str, ProjectPoller] = {}
        self._per_key: Counter[Hashable] = Counter()
        self._open = 0

    @property
    def open_streams(self) -> int:
        return self._open

    @property
    def followed_projects(self) -> list[str]:
        return list(self._pollers)

    def admit(self, key: Hashable, per_key: int, total: int) -> None:
        """Count one more stream for `key`, or raise 429 when the key or the process is at its cap."""
        if self._per_key[key] >= per_key:
            raise TooManyStreams(
                f"This API key already follows {per_key} pipeline event streams "
                "(PIPELINE_STREAMS_PER_KEY); close one first."
            )
        if self._open >= total:
            raise TooManyStreams(
                f"This server already serves {total} pipeline event streams (PIPELINE_STREAMS_MAX); retry later.",
                code="streams_full",
            )
        self._per_key[key] += 1
        self._open += 1

    def release(self, key: Hashable) -> None:
        self._per_key[key] -= 1
        if self._per_key[key] <= 0:
            del self._per_key[key]
        self._open -= 1

    def join(self, project_id: str, db: Database, interval: float) -> ProjectPoller:
        poller = self._pollers.get(project_id)
        if poller is None or poller.ended:
            poller = self._pollers[project_id] = ProjectPoller(project_id)
            poller.task = asyncio.create_task(poller.run(db, interval), name=f"pipeline-feed-{project_id}")
        poller.followers += 1
        return poller

    def leave(self, poller: ProjectPoller) -> None:
        poller.followers -= 1
        if poller.followers == 0:
            if self._pollers.get(poller.project_id) is poller:
                del self._pollers[poller.project_id]
            if poller.task is not None:
                poller.task.cancel()

    async def close(self) -> None:
        """End every stream (the server is stopping) and stop the pollers."""
        pollers, self._pollers = list(self._pollers.values()), {}
        for poller in pollers:
            poller.end("shutting_down")
            if poller.task is not None:
                poller.task.cancel()
        for poller in pollers:
            if poller.task is not None:
                with contextlib.suppress(BaseException):
                    await poller.task
