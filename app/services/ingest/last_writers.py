"""Which in-flight document of this process last rewrote each entity or relation.

Every writer of a description (a merge, a summary fold) embeds what it wrote, compare-and-set, so when
a later document of this process has rewritten the item since, an earlier document's embedding would
be discarded anyway. Skipping it saves the embedding call and the vector-index update: with entities
that recur in every document, most of them. Entries live only while a document holding them is in
flight. The skip relies on the last writer embedding: one that fails before its embeddings must still
embed, from the stored rows, every item it is the last writer of (DocumentPipeline does).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable


class LastWriters:
    def __init__(self) -> None:
        self._last: dict[Hashable, tuple[object, int]] = {}  # item -> (last writer, documents holding it)
        self._held: dict[object, set[Hashable]] = {}

    def wrote(self, writer: object, items: Iterable[Hashable]) -> None:
        held = self._held.setdefault(writer, set())
        for item in items:
            _, holders = self._last.get(item, (None, 0))
            if item not in held:
                held.add(item)
                holders += 1
            self._last[item] = (writer, holders)

    def should_embed(self, writer: object, item: Hashable) -> bool:
        """False when another document rewrote the item after `writer` (embedding it is that one's job)."""
        last = self._last.get(item)
        return last is None or last[0] is writer

    def release(self, writer: object) -> None:
        """The writer's document ended (its embeddings done, or attempted from the stored rows)."""
        for item in self._held.pop(writer, ()):
            last, holders = self._last[item]
            if holders <= 1:
                del self._last[item]
            else:
                self._last[item] = (last, holders - 1)

    def __len__(self) -> int:
        return len(self._last)
