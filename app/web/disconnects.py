"""Work that ends when its client leaves.

A client that disconnects cancels its request wherever it is (database, keyword extraction, waiting for an
LLM slot, the answer call or stream): abandoned requests must not hold the LLM slots that other queries and
ingestion wait for. Nothing partial is cached: a cancelled LLM call never returns an answer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import TypeVar

import anyio
from fastapi.responses import StreamingResponse
from starlette.types import Message, Receive, Scope, Send

from app.core import metrics
from app.core.errors import ClientDisconnected

T = TypeVar("T")
log = logging.getLogger(__name__)


async def _disconnected(receive: Receive) -> None:
    """Return once the client has gone (the body has been read, so nothing else can arrive)."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def unless_client_leaves(receive: Receive, work: Awaitable[T]) -> T:
    """Await `work`, but if the client disconnects first, cancel it (its LLM call, slot or place in the
    queue for one go with it), let it unwind and raise ClientDisconnected."""
    task = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(_disconnected(receive))
    try:
        done, _ = await asyncio.wait((task, watcher), return_when=asyncio.FIRST_COMPLETED)
    except BaseException:  # cancelled ourselves (shutdown): take the work down with us
        task.cancel()
        raise
    finally:
        watcher.cancel()
    if task in done:
        return task.result()
    task.cancel()
    await asyncio.wait((task,))
    if not task.cancelled():
        task.exception()  # nobody is left to tell; marks it retrieved
    raise ClientDisconnected("The client disconnected before the answer was ready")


class SendTimedOut(Exception):
    """The client accepted no bytes within the send timeout (see `bounded_send`)."""


def bounded_send(send: Send, timeout: float | None) -> Send:
    """`send`, raising SendTimedOut when one message waits longer than `timeout` s for the client (None: no
    bound). A client that stays connected but stops reading must not hold what produces its answer."""
    if timeout is None:
        return send

    async def bounded(message: Message) -> None:
        try:
            with anyio.fail_after(timeout):
                await send(message)
        except TimeoutError as exc:
            raise SendTimedOut from exc

    return bounded


class EventStream(StreamingResponse):
    """An SSE response that stops as soon as the client disconnects, whatever ASGI spec version the server
    speaks (from 2.4 on, Starlette only notices when a write fails, and nothing is written while the LLM is
    thinking or queued), then closes its event generator, which closes the LLM stream behind it at once
    instead of whenever the generator is garbage collected.

    With a `send_timeout`, a client that stays connected but accepts nothing for that many seconds is dropped
    the same way (the server closes the connection): it must not keep its events, and what produces them,
    forever."""

    def __init__(
        self,
        events: AsyncGenerator[str, None],
        send_timeout: float | None = None,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(
            events, media_type="text/event-stream", headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        )
        self._events = events
        self._send_timeout = send_timeout
        self._on_close = on_close  # runs once the response ends, however it ends (even before it started)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await unless_client_leaves(receive, self.stream_response(bounded_send(send, self._send_timeout)))
        except (ClientDisconnected, OSError):  # gone before or while we wrote: nothing more to send
            pass
        except SendTimedOut:
            metrics.STREAMS_DROPPED.inc()
            log.warning("stream dropped: the client accepted no bytes for %s s", self._send_timeout)
        finally:
            try:
                await self._events.aclose()
            finally:
                if self._on_close is not None:
                    self._on_close()
