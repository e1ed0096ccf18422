"""Markdown export: a heading per section and a GitHub-flavoured pipe table of its rows.

Cells are escaped so tables stay intact and render the exact text: `\\` and `|` are backslash-escaped,
`&`, `<`, `>` become entities (so a literal `<br>` or `<SEP>` in the data cannot be mistaken for markup)
and line breaks become `<br>`. List cells show one value per line.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator
from typing import Any

from app.services.export.model import Column, GraphExport, Kind

_SPECIAL = re.compile(r"[\\|&<>\r\n]")
_NEWLINES = re.compile(r"\r\n|\r|\n")


def escape_cell(text: str) -> str:
    if _SPECIAL.search(text) is None:  # most cells (names, numbers, vectors): nothing to do
        return text
    # Backslash first, so the escapes added for `|` are not escaped again; `&` before the entities.
    text = text.replace("\\", "\\\\").replace("|", "\\|").replace("&", "&amp;").replace("<", "&lt;")
    return _NEWLINES.sub("<br>", text.replace(">", "&gt;"))


def _cell(column: Column, value: Any) -> str:
    if column.kind is Kind.LIST:
        return "<br>".join(escape_cell(v) for v in value)
    if column.kind is Kind.NUMBER:
        return str(value)
    return escape_cell(value or "")


def _line(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |\n"


async def write_markdown(export: GraphExport) -> AsyncGenerator[bytes, None]:
    counts = " · ".join(f"{s.title}: {export.counts.get(s.name, 0)}" for s in export.sections)
    yield f"# Knowledge graph export: {export.project_id}\n\n{counts}\n".encode()
    for section in export.sections:
        head = _line([c.name for c in section.columns])
        rule = _line(["---:" if c.kind is Kind.NUMBER else "---" for c in section.columns])
        yield f"\n## {section.title}\n\n{head}{rule}".encode()
        async for batch in section.batches:
            lines = [_line([_cell(c, v) for c, v in zip(section.columns, row, strict=True)]) for row in batch]
            yield "".join(lines).encode()
