"""A worker's liveness beat: records the worker as alive (the `workers` table) every heartbeat interval from
a thread of its own, with its own connection.

On its own thread, a busy or briefly stalled event loop (a large document being chunked, a slow pool) does
not look like a dead process: the beat stops only when the process is gone, or cannot reach the database.
Other workers then retake its documents after three missed beats. A process that is alive but whose event
loop is stuck stops heartbeating its documents instead, and those are retaken after WORKER_CLAIM_TIMEOUT.
"""

from __future__ import annotations

import asyncio
import logging
import threading

from app.db.engine import Database
from app.db.errors import is_connection_error
from app.repositories import workers as workers_repo

log = logging.getLogger(__name__)


class LivenessBeat:
    def __init__(self, database_url: str, worker_id: str, interval: float) -> None:
        self.database_url = database_url
        self.worker_id = worker_id
        self.interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.beats = 0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"liveness-{self.worker_id}", daemon=True)
        self._thread.start()

    async def stop(self) -> None:
        """Stop beating (before the worker removes its row, which a late beat would otherwise re-create)."""
        self._stop.set()
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join, 10)

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        asyncio.run(self._beat())

    async def _beat(self) -> None:
        # Worker.start recorded the worker just now: the first beat is due one interval later, so a process
        # that stops sooner (a CLI command, a test) never opens this thread's connection
        if self._stop.wait(self.interval):
            return
        db = Database(self.database_url, pool_size=1)
        failing = False
        try:
            while not self._stop.is_set():
                try:
                    async with db.transaction() as conn:
                        await workers_repo.seen(conn, self.worker_id, self.interval)
                    self.beats += 1
                    failing = False
                except Exception as exc:
                    if not failing:  # one line per outage, not one per beat
                        log.warning(
                            "worker %s: liveness beat failed (%s)%s",
                            self.worker_id,
                            type(exc).__name__,
                            ", database unavailable" if is_connection_error(exc) else "",
                        )
                    failing = True
                # this thread runs nothing else: blocking its loop while waiting is fine
                self._stop.wait(self.interval)
        finally:
            await db.engine.dispose()  # the engine only: the embedded server belongs to the container's Database
