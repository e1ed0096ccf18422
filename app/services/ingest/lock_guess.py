"""What a merge's resolution will lock, guessed from what this process has read and written before.

Resolution locks the keys its reading names (services/ingest/name_resolution.py): the document's names and
match keys, and the entities the reading finds near them, their aliases' targets and the keys fitting an
undefined acronym's initials. Those last come from the database, so they used to be read once without locks
just to choose the lock set, and again under the locks. Guessed from the keys this process has seen, the
locks usually cover what the reading under them names, and that one reading is the decision's; when it names
a key not locked, the merge retries with the larger set as before (`NameResolution.decide_locked`). A guess
only decides how many readings a merge takes, never what is decided: keys gone since cost a lock, nothing more.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterable, Mapping

from app.domain.cross_document import Ranges, prefix_end

_LIMIT = 50_000  # keys remembered per project: past it, guesses miss more often and merges read twice
_PROJECTS = 16  # projects remembered (the least recently merged into forgotten first)
_PER_RANGE = 40  # the reading takes 20 per range; a few more cover keys the process saw that are gone


class KnownKeys:
    """One project's entity keys this process has seen exist, and the alias targets and initials' keys read."""

    def __init__(self) -> None:
        self._present: set[str] = set()
        self._sorted: list[str] = []
        self._reversed: list[str] = []  # each key reversed, sorted
        self.aliases: dict[str, str] = {}  # alias key → entity key
        self.initials: dict[str, list[str]] = {}  # an undefined acronym's letters → the keys fitting them

    def learn(self, keys: Iterable[str]) -> None:
        for key in keys:
            if key not in self._present and len(self._present) < _LIMIT:
                self._present.add(key)
                insort(self._sorted, key)
                insort(self._reversed, key[::-1])

    def learn_aliases(self, aliases: Mapping[str, str]) -> None:
        if len(self.aliases) < _LIMIT:
            self.aliases.update(aliases)

    def near(self, ranges: Ranges) -> set[str]:
        """The keys seen that lie in `ranges` (the reading takes the first ones of each range by key)."""
        out = {k for k in ranges.exact if k in self._present}
        for prefix in ranges.prefixes:
            start = bisect_left(self._sorted, prefix)
            end = bisect_left(self._sorted, prefix_end(prefix), start)
            out.update(self._sorted[start : min(end, start + _PER_RANGE)])
        for prefix in ranges.reversed_prefixes:
            start = bisect_left(self._reversed, prefix)
            end = bisect_left(self._reversed, prefix_end(prefix), start)
            out.update(k[::-1] for k in self._reversed[start : min(end, start + _PER_RANGE)])
        return out


class LockGuesses:
    """KnownKeys per project, for the whole process (the merges of every worker task share it)."""

    def __init__(self) -> None:
        self._projects: dict[str, KnownKeys] = {}

    def of(self, project_id: str) -> KnownKeys:
        known = self._projects.pop(project_id, None) or KnownKeys()
        self._projects[project_id] = known  # the most recent last
        if len(self._projects) > _PROJECTS:
            del self._projects[next(iter(self._projects))]
        return known
