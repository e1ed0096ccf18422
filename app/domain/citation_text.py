"""The parts of an answer around its claims: a references list the model wrote itself, and the compact
footnotes of the cited documents the chat APIs add when it wrote none."""

from __future__ import annotations

import re
from collections.abc import Sequence

_REFERENCES_HEADING = re.compile(
    r"^[ \t]{0,3}(?:#{1,6}[ \t]*)?(?:\*\*|__)?[ \t]*(?:references|sources|citations|bibliography)[ \t]*:?"
    r"[ \t]*(?:\*\*|__)?[ \t]*:?[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
_MAX_ENTRY_CHARS = 300
_MAX_ENTRIES = 40


def model_references_start(text: str) -> int | None:
    """Where a references list the model wrote at the end of its answer starts (its heading), if it did:
    a heading such as "### References" or "**Sources:**" followed only by short lines."""
    for heading in reversed(list(_REFERENCES_HEADING.finditer(text))):
        rest = [line for line in text[heading.end() :].splitlines() if line.strip()]
        if len(rest) <= _MAX_ENTRIES and all(len(line) <= _MAX_ENTRY_CHARS for line in rest):
            return heading.start()
        return None
    return None


def without_model_references(text: str) -> str:
    start = model_references_start(text)
    return text if start is None else text[:start].rstrip()


def footnotes(cited: Sequence[tuple[str, str]]) -> str:
    """The footnotes block for (reference id, document label) pairs; empty when nothing was cited."""
    if not cited:
        return ""
    lines = "".join(f"\n- [{ref}] {label}" for ref, label in cited)
    return f"\n\n**Sources**{lines}"
