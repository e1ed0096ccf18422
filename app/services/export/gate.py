"""A per-process cap on concurrent exports.

Every running export holds a slot from its first byte until its response ends (finished, client gone, or
dropped by the send timeout), so clients that open many downloads and stop reading cannot pile up work,
memory and database time without bound. One event loop per process: a plain counter is enough.
"""

from __future__ import annotations


class ExportGate:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.active = 0

    def try_enter(self) -> bool:
        """Take a slot if one is free; the caller must `leave()` exactly once when it got one."""
        if self.active >= self.limit:
            return False
        self.active += 1
        return True

    def leave(self) -> None:
        self.active -= 1
