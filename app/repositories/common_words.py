"""Which query words are too common in a project's table to search for, remembered for a few minutes.

Deciding costs a bounded count per word (up to COMMON_WORD_ROWS + 1 matching rows read, ~5 ms for a word
found everywhere in a 10,000-entity project), while a project's vocabulary changes slowly and the same
generic words ("company", "system", "report") recur from query to query. A decision is kept for TTL_SECONDS:
a word that became common meanwhile is still searched (slower, same results), one that stopped being common
is left out a little longer. Per process; a process holds at most MAX_ENTRIES decisions.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from sqlalchemy.ext.asyncio import AsyncConnection

from app.repositories import lexical

TTL_SECONDS = 300.0
MAX_ENTRIES = 20_000

_Key = tuple[str, str, int, str]  # project, table, threshold, word


class CommonWords:
    def __init__(
        self, ttl: float = TTL_SECONDS, max_entries: int = MAX_ENTRIES, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl = ttl
        self.max_entries = max_entries
        self.clock = clock
        self._decided: dict[_Key, tuple[bool, float]] = {}

    async def searchable(self, conn: AsyncConnection, project_id: str, table: str, words: list[str]) -> list[str]:
        """`words` without those found in more than COMMON_WORD_ROWS rows of the project's `table`."""
        threshold = lexical.COMMON_WORD_ROWS
        now = self.clock()
        common: dict[str, bool] = {}
        for word in words:
            decided = self._decided.get((project_id, table, threshold, word))
            if decided is not None and decided[1] > now:
                common[word] = decided[0]
        unknown = [w for w in words if w not in common]
        if unknown:
            found = await lexical.common_words(conn, table, project_id, unknown)
            for word in unknown:
                common[word] = word in found
                self._remember((project_id, table, threshold, word), word in found, now + self.ttl)
        return [w for w in words if not common[w]]

    def _remember(self, key: _Key, common: bool, expires: float) -> None:
        self._decided.pop(key, None)
        if len(self._decided) >= self.max_entries:  # the oldest decision goes first (insertion order)
            del self._decided[next(iter(self._decided))]
        self._decided[key] = (common, expires)
