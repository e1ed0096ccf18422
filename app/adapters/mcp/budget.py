"""Results sized for a model's context: a tool's answer is cut to its `max_tokens` budget, lowest-ranked list
items first (from whichever list costs most), then long texts, and says what was cut."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

ELLIPSIS = " […]"


def dump(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, default=str)


def _parent(data: dict[str, Any], path: str) -> tuple[Any, Any]:
    """The container holding the value a dotted path names ("relations.2.description": an index in a list)."""
    *outer, last = path.split(".")
    node: Any = data
    for part in outer:
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node, int(last) if isinstance(node, list) else last


def fit(
    data: dict[str, Any],
    budget: int,
    count: Callable[[str], int],
    truncate: Callable[[str, int], str],
    *,
    lists: Sequence[str] = (),
    texts: Sequence[str] = (),
    then: Callable[[dict[str, Any]], Sequence[str]] | None = None,
    note_room: int = 0,
) -> list[str]:
    """Cut `data` in place until its JSON is at most `budget` tokens; returns what was cut, one phrase each.
    `lists` and `texts` are dotted paths to the lists whose tail may go and the strings that may be shortened.
    `then`: after the cut, brings what depends on the kept items up to date (it may make them longer) and
    names the lists (of `lists`) that may be cut further; it is asked again after each further cut.
    `note_room`: tokens a cut leaves free for the note that will say what was cut."""
    items_before = {path: len(_get(data, path)) for path in lists}
    tokens_before: dict[str, int] = {}
    if count(dump(data)) > budget:
        budget -= note_room
    for _ in range(4):  # item costs are estimates (separators): re-measure, and cut again if still over
        over = count(dump(data)) - budget
        if over <= 0:
            break
        over = _drop_items(data, lists, over, count)
        if over > 0:
            _shorten_texts(data, texts, over, count, truncate, tokens_before)
    if then is not None:
        again = then(data)
        for _ in range(4):
            over = count(dump(data)) - budget
            if over <= 0:
                break
            _drop_items(data, again, over, count)
            again = then(data)
    notes = [
        f"kept {len(_get(data, path))} of {before} {path.rsplit('.', 1)[-1]}"
        for path, before in items_before.items()
        if len(_get(data, path)) < before
    ]
    notes += [f"{path} cut to {count(_get(data, path))} of {before} tokens" for path, before in tokens_before.items()]
    return notes


def _get(data: dict[str, Any], path: str) -> Any:
    parent, key = _parent(data, path)
    return parent[key]


def _drop_items(data: dict[str, Any], lists: Sequence[str], over: int, count: Callable[[str], int]) -> int:
    costs = {path: [count(dump(item)) + 1 for item in _get(data, path)] for path in lists}
    while over > 0:
        heaviest = max((p for p in costs if costs[p]), key=lambda p: sum(costs[p]), default=None)
        if heaviest is None:
            break
        _get(data, heaviest).pop()
        over -= costs[heaviest].pop()
    return over


def _shorten_texts(
    data: dict[str, Any],
    texts: Sequence[str],
    over: int,
    count: Callable[[str], int],
    truncate: Callable[[str, int], str],
    tokens_before: dict[str, int],
) -> None:
    for path in texts:
        if over <= 0:
            return
        parent, key = _parent(data, path)
        text = parent[key]
        if not isinstance(text, str) or not text:
            continue
        tokens = count(text)
        tokens_before.setdefault(path, tokens)
        keep = max(0, tokens - over - 8)
        parent[key] = truncate(text, keep) + ELLIPSIS
        over -= tokens - keep
