"""A semaphore that admits waiters by priority (lower first), FIFO within a priority.

Queries must not queue behind hundreds of pending extraction calls: the official implementation gives
query/keyword calls priority 5, summaries 8 and extraction 10, and so do we.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class PrioritySemaphore:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.in_use = 0
        self.peak = 0
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    @property
    def waiting(self) -> int:
        """Callers queued for a slot."""
        return len(self._waiters)

    @asynccontextmanager
    async def slot(self, priority: int = 10) -> AsyncIterator[None]:
        await self._acquire(priority)
        try:
            yield
        finally:
            self._release()

    async def _acquire(self, priority: int) -> None:
        if self.in_use < self.limit and not self._waiters:
            self._take()
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (priority, next(self._order), future))
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self._release()  # the slot was handed over just as we were cancelled
            else:
                self._waiters = [w for w in self._waiters if w[2] is not future]
                heapq.heapify(self._waiters)
            raise

    def _take(self) -> None:
        self.in_use += 1
        self.peak = max(self.peak, self.in_use)

    def _release(self) -> None:
        self.in_use -= 1
        while self._waiters and self.in_use < self.limit:
            _, _, future = heapq.heappop(self._waiters)
            if not future.done():
                self._take()
                future.set_result(None)
