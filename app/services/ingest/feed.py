"""The live feed of a project's pipeline (GET /pipeline/events): its pipeline events as they are recorded,
and the stage and figures of its processing documents whenever they change.

Read from the database (every worker, in any process, writes there) at most once per
PROGRESS_WRITE_INTERVAL, the rate at which progress is written anyway.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

from app.container import Container
from app.repositories import documents as docs_repo
from app.repositories import pipeline_events as events_repo
from app.schemas.documents import InFlight, PipelineEvent
from app.services.projects import require_project


class PipelineFeed:
    def __init__(self, c: Container) -> None:
        self.c = c
        self.interval = c.settings.progress_write_interval

    async def start(self, project_id: str, after: int | None) -> int:
        """Check the project; the id after which events are streamed (the newest now, unless resuming)."""
        async with self.c.db.connect() as conn:
            await require_project(conn, project_id)
            return after if after is not None else await events_repo.last_id(conn, project_id)

    async def follow(self, project_id: str, after: int) -> AsyncGenerator[tuple[dict, int | None], None]:
        """(payload, event id) forever: `{"type": "event", …PipelineEvent}` with its id, and
        `{"type": "progress", …InFlight}` for each processing document whose state changed (the first
        time, every processing document); `{"type": "idle", "document_id"}` when one stops processing."""
        shown: dict[str, tuple] = {}
        while True:
            async with self.c.db.connect() as conn:
                events = await events_repo.recent(conn, project_id, limit=200, after=after)
                flying = await docs_repo.in_flight(conn, project_id)
            for row in events:
                after = row["id"]
                yield {"type": "event", **PipelineEvent(**row).model_dump(mode="json")}, row["id"]
            current = {r["id"]: r for r in flying}
            for doc_id, row in current.items():
                state = (row["stage"], row["progress"], row["cancel_requested"], row["attempts"])
                if shown.get(doc_id) != state:
                    shown[doc_id] = state
                    yield {"type": "progress", **InFlight(**row).model_dump(mode="json")}, None
            for doc_id in [d for d in shown if d not in current]:
                del shown[doc_id]
                yield {"type": "idle", "document_id": doc_id}, None
            await asyncio.sleep(self.interval)
