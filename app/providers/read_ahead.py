"""Read a stream ahead of its consumer, into a bounded buffer.

An LLM stream holds a concurrency slot until it has been read to its end. Read at the pace of the HTTP client
that asked for it, one client that stays connected but stops reading would keep that slot (and every other LLM
call waiting for it) for as long as it likes. Read ahead by a task of its own, the stream ends, and its slot is
freed, as soon as the model has finished; the answer waits in memory for the client, who is dropped if it takes
nothing for STREAM_SEND_TIMEOUT seconds (app/web/disconnects.py).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator

from app.core.error_codes import ErrorCode
from app.core.errors import ProviderError

ITEM_OVERHEAD = 64  # bytes a buffered piece costs besides its text (one small str object and its slot)


class ReadAheadOverflow(ProviderError):
    code: ErrorCode = "answer_buffer_full"


async def read_ahead(source: AsyncGenerator[str, None], limit: int) -> AsyncGenerator[str, None]:
    """`source`'s pieces, read by their own task from the first `__anext__` on, as fast as it gives them. Once
    more than `limit` bytes (about: text plus ITEM_OVERHEAD a piece) wait unread, `source` is closed and the
    reader gets what was buffered, then ReadAheadOverflow. `source`'s errors reach the reader after the pieces
    before them; closing this generator (or cancelling its reader) closes `source` at once."""
    buffer: deque[str] = deque()
    arrived = asyncio.Event()
    outcome: list[BaseException | None] = []  # [None]: `source` ended; [error]: it failed
    held = 0

    async def pump() -> None:
        nonlocal held
        try:
            async for piece in source:
                buffer.append(piece)
                held += len(piece) + ITEM_OVERHEAD
                arrived.set()
                if held > limit:
                    raise ReadAheadOverflow(
                        f"The answer outgrew its {limit}-byte buffer while the client was not reading it"
                    )
            outcome.append(None)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 (handed over to the reader, who raises it)
            outcome.append(exc)
        finally:
            await source.aclose()  # in this task, which opened it: the LLM stream's context managers need that
            arrived.set()

    reader = asyncio.ensure_future(pump())
    try:
        while True:
            if buffer:
                piece = buffer.popleft()
                held -= len(piece) + ITEM_OVERHEAD
                yield piece
            elif outcome:
                if outcome[0] is not None:
                    raise outcome[0]
                return
            else:
                arrived.clear()
                await arrived.wait()
    finally:
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)  # its own cancellation is not ours to raise
