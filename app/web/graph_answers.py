"""Graph-view answers (GET /graph, GET /lightrag/graphs) that cannot stall the server.

At most GRAPH_MAX_CONCURRENT are read and encoded at once per process; more wait for a turn up to
GRAPH_QUEUE_TIMEOUT seconds, then answer 503 `graph_busy` with Retry-After (as exports do). The rows are read on
the event loop; shaping them and encoding the JSON (a second of CPU for 10,000 nodes) runs in a worker thread,
and the route returns the encoded bytes as they are.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from anyio import to_thread
from fastapi import Request, Response
from fastapi.responses import JSONResponse

from app.core.config import Settings
from app.web.openapi import errors

RETRY_AFTER_SECONDS = 5
BUSY_DOC: dict[int | str, dict[str, Any]] = {
    503: {
        **errors(503)[503],
        "description": "Too many large graph answers being built at once (`graph_busy`): retry after "
        "`Retry-After` s; or the database is unavailable (`database_unavailable`)",
        "headers": {"Retry-After": {"description": "Seconds to wait", "schema": {"type": "integer"}}},
    }
}
Rows = TypeVar("Rows")


class GraphGate:
    """A semaphore whose waiters give up after a bounded wait. One event loop per process."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.active = 0
        self.waiting = 0
        self._slots = asyncio.Semaphore(limit)

    @asynccontextmanager
    async def slot(self, wait: float) -> AsyncIterator[bool]:
        """Yields whether a slot was had within `wait` seconds (the body runs either way)."""
        if not await self._enter(wait):
            yield False
            return
        try:
            yield True
        finally:
            self.active -= 1
            self._slots.release()

    async def _enter(self, wait: float) -> bool:
        if self._slots.locked():  # wait_for would time out at once even for a free slot when `wait` is 0
            self.waiting += 1
            try:
                await asyncio.wait_for(self._slots.acquire(), wait)
            except TimeoutError:
                return False
            finally:
                self.waiting -= 1
        else:
            await self._slots.acquire()
        self.active += 1
        return True


def graph_gate(request: Request, settings: Settings) -> GraphGate:
    """The process's gate, made on first use (one app per process)."""
    gate = getattr(request.app.state, "graph_gate", None)
    if gate is None:
        gate = request.app.state.graph_gate = GraphGate(settings.graph_max_concurrent)
    return gate


async def graph_answer(
    request: Request, settings: Settings, read: Callable[[], Awaitable[Rows]], encode: Callable[[Rows], bytes]
) -> Response:
    """`read()` on the loop, `encode(rows)` in a worker thread, both within a gate slot."""
    async with graph_gate(request, settings).slot(settings.graph_queue_timeout) as admitted:
        if not admitted:
            return busy(settings.graph_max_concurrent)
        rows = await read()
        body = await to_thread.run_sync(encode, rows)  # not abandoned when cancelled: the slot lasts as long
    return Response(body, media_type="application/json")


def busy(limit: int) -> JSONResponse:
    return JSONResponse(
        {
            "detail": f"{limit} large graph answers are already being built on this server; retry after "
            f"{RETRY_AFTER_SECONDS} s.",
            "code": "graph_busy",
        },
        status_code=503,
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
    )
