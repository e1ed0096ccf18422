"""The parts of an answer around its claims: a references list the model wrote itself, the compact
footnotes of the cited documents the chat APIs add when it wrote none, and the references an answer cites."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

_REFERENCES_HEADING = re.compile(
    r"^[ \t]{0,3}(?:#{1,6}[ \t]*)?(?:\*\*|__)?[ \t]*(?:references|sources|citations|bibliography)[ \t]*:?"
    r"[ \t]*(?:\*\*|__)?[ \t]*:?[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
_DOCUMENT_MARK = re.compile(r"\[(\d{1,4})\]")
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


def cited_references(answer: Mapping[str, Any]) -> list[Any]:
    """The references a query answer (POST /query's JSON) cites: its claims' sources and the [n] markers of its
    text; all of them when it has no claims (a context-only answer, or one not checked)."""
    references = answer.get("references") or []
    claims = answer.get("claims") or []
    if not claims:
        return list(references)
    cited = {c["document_id"] for claim in claims for c in claim.get("citations") or []}
    marked = set(_DOCUMENT_MARK.findall(answer.get("response") or ""))
    return [r for r in references if r["document_id"] in cited or str(r["reference_id"]) in marked]
