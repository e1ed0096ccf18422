"""The live feed of a project's pipeline (GET /pipeline/events): its pipeline events as they are recorded,
and the stage and figures of its processing documents whenever they change.

Every stream of a project follows the same poller (app/services/pipeline_hub.py), which reads the
database (every worker, in any process, writes there) at most once per PROGRESS_WRITE_INTERVAL.
A resumed stream pages forward from its Last-Event-ID, in order, however many events it missed.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Hashable
from dataclasses import dataclass

from app.container import Container
from app.repositories import pipeline_events as events_repo
from app.schemas.documents import InFlight, PipelineEvent
from app.services.pipeline_hub import PAGE, ProjectPoller, progress_state
from app.services.projects import require_project

_ENDINGS = {"project_deleted": "The project was deleted.", "shutting_down": "The server is shutting down."}


@dataclass(frozen=True)
class Resume:
    after: int  # events with a larger id are streamed
    reset: bool  # events the client has not seen were pruned from the log: it must reload GET /pipeline


def _event(row: dict) -> tuple[dict, int]:
    return {"type": "event", **PipelineEvent(**row).model_dump(mode="json")}, row["id"]


class PipelineFeed:
    def __init__(self, c: Container) -> None:
        self.c = c

    async def open(self, project_id: str, last_event_id: int | None, key: Hashable) -> Resume:
        """Take a stream's place for API key `key` (429 beyond the caps: refused before any database work),
        then `start`. Give it back with `close` once the stream ends."""
        settings = self.c.settings
        self.c.pipeline_hub.admit(key, settings.pipeline_streams_per_key, settings.pipeline_streams_max)
        try:
            return await self.start(project_id, last_event_id)
        except BaseException:
            self.close(key)
            raise

    def close(self, key: Hashable) -> None:
        self.c.pipeline_hub.release(key)

    async def start(self, project_id: str, last_event_id: int | None) -> Resume:
        """Check the project; where its stream starts (the newest event now, unless resuming)."""
        async with self.c.db.connect() as conn:
            await require_project(conn, project_id)
            newest = await events_repo.last_id(conn, project_id)
            if last_event_id is None:
                return Resume(newest, reset=False)
            if await events_repo.pruned_after(conn, project_id, last_event_id):
                return Resume(newest, reset=True)
            return Resume(last_event_id, reset=False)

    async def follow(self, project_id: str, resume: Resume) -> AsyncGenerator[tuple[dict, int | None], None]:
        """(payload, event id) until the project is deleted: `{"type": "event", …PipelineEvent}` with its id,
        in id order; `{"type": "progress", …InFlight}` for each processing document whose state changed (the
        first time, every processing document); `{"type": "idle", "document_id"}` when one stops processing.
        First `{"type": "reset"}` (with the newest id) when events after Last-Event-ID were pruned; last
        `{"type": "end", "reason"}` when the project was deleted (or the server stops)."""
        after = resume.after
        if resume.reset:
            yield (
                {
                    "type": "reset",
                    "reason": "events_pruned",
                    "detail": "Events after Last-Event-ID are no longer kept: reload GET /pipeline.",
                },
                after,
            )
        poller = self.c.pipeline_hub.join(project_id, self.c.db, self.c.settings.progress_write_interval)
        try:
            shown: dict[str, tuple] = {}
            while True:
                changed = poller.changed
                if poller.polled:
                    while after < poller.floor:  # further behind than the poller keeps
                        page = await self._page(project_id, after)
                        if not page:
                            break
                        for row in page:
                            after = row["id"]
                            yield _event(row)
                    for row in poller.since(after):
                        after = row["id"]
                        yield _event(row)
                    for payload in _progress(shown, poller):
                        yield payload, None
                if poller.ended:  # also when it ended before its first read (the project went first)
                    yield {"type": "end", "reason": poller.ended, "detail": _ENDINGS[poller.ended]}, None
                    return
                await changed.wait()
        finally:
            self.c.pipeline_hub.leave(poller)

    async def _page(self, project_id: str, after: int) -> list[dict]:
        async with self.c.db.connect() as conn:
            return await events_repo.after(conn, project_id, after, PAGE)


def _progress(shown: dict[str, tuple], poller: ProjectPoller) -> list[dict]:
    """What changed in the processing documents since this stream last looked (`shown`, updated)."""
    payloads = []
    current = {r.id: r for r in poller.flying}
    for doc_id, row in current.items():
        state = progress_state(row)
        if shown.get(doc_id) != state:
            shown[doc_id] = state
            payloads.append(
                {"type": "progress", **InFlight.model_validate(row, from_attributes=True).model_dump(mode="json")}
            )
    for doc_id in [d for d in shown if d not in current]:
        del shown[doc_id]
        payloads.append({"type": "idle", "document_id": doc_id})
    return payloads
