"""Which in-flight document of this process last rewrote each entity or relation.

Every writer of a description (a merge, a summary fold) embeds what it wrote, compare-and-set, so when
a later document of this process has rewritten the item since, an earlier document's embedding would
be discarded anyway. Skipping it saves the embedding call and the vector-index update: with entities
that recur in every document, most of them. Entries live only while a document holding them is in
flight; a writer that ends without embedding hands its items back ("embed them yourselves").
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

_NOBODY = object()  # the last writer ended without embedding: whoever still holds the item embeds it


class LastWriters:
    def __init__(self) -> None:
        self._last: dict[Hashable, tuple[object, int]] = {}  # item -> (last writer, documents holding it)
        self._held: dict[object, set[Hashable]] = {}

    def wrote(self, writer: object, items: Iterable[Hashable]) -> None:
        held = self._held.setdefault(writer, set())
        for item in items:
            _, holders = self._last.get(item, (_NOBODY, 0))
            if item not in held:
                held.add(item)
                holders += 1
            self._last[item] = (writer, holders)

    def should_embed(self, writer: object, item: Hashable) -> bool:
        """False when another in-flight document rewrote the item after `writer` (it will embed it)."""
        last = self._last.get(item)
        return last is None or last[0] is writer or last[0] is _NOBODY

    def release(self, writer: object, embedded: bool) -> None:
        for item in self._held.pop(writer, ()):
            last, holders = self._last[item]
            if holders <= 1:
                del self._last[item]
            else:
                self._last[item] = (_NOBODY if last is writer and not embedded else last, holders - 1)

    def __len__(self) -> int:
        return len(self._last)
