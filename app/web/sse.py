"""Server-Sent Events framing, and keep-alive comments for streams that can be quiet for a long time
(a slow retrieval before the first token, an idle pipeline): proxies cut connections that send nothing."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator

KEEP_ALIVE = ": keep-alive\n\n"


def sse_event(payload: dict, event_id: int | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}data: {json.dumps(payload, ensure_ascii=False, default=str)}\n\n"


async def keep_alive(events: AsyncIterator[str], interval: float) -> AsyncGenerator[str, None]:
    """`events`, with a keep-alive comment whenever `interval` seconds pass without one.

    `events` runs in one task of its own from start to end (an LLM stream's context managers must enter
    and exit in the same task); closing this generator cancels that task."""
    queue: asyncio.Queue = asyncio.Queue(maxsize=1)
    done = object()

    async def produce() -> None:
        try:
            async for item in events:
                await queue.put(item)
        finally:
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                await aclose()
        await queue.put(done)

    producer = asyncio.ensure_future(produce())
    getting: asyncio.Future | None = None
    try:
        while True:
            if getting is None:
                getting = asyncio.ensure_future(queue.get())
            finished, _ = await asyncio.wait((getting, producer), timeout=interval, return_when=asyncio.FIRST_COMPLETED)
            if getting not in finished:
                if producer in finished and queue.empty():
                    producer.result()  # it failed: raise its error here
                    return
                if not finished:
                    yield KEEP_ALIVE
                continue
            item, getting = getting.result(), None
            if item is done:
                return
            yield item
    finally:
        for task in (getting, producer):
            if task is not None:
                task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.gather(*(t for t in (getting, producer) if t is not None), return_exceptions=True)
