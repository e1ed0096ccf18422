"""Plain-text export for a person: a titled block per entity, relation and chunk, fields indented beneath,
multi-line values (descriptions, chunk content) indented one level further, line by line."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from app.services.export.model import Column, GraphExport, Kind, Row, Section

INDENT = "    "


def _value(column: Column, value: Any) -> str:
    if column.kind is Kind.LIST:
        return ", ".join(value)
    if column.kind is Kind.NUMBER:
        return str(value)
    return value or ""


def _block(section: Section, row: Row) -> str:
    title = " — ".join(str(v) for v in row[: section.headline])
    lines = [title]
    for column, value in zip(section.columns[section.headline :], row[section.headline :], strict=True):
        text = _value(column, value)
        if "\n" in text or "\r" in text:
            lines.append(f"  {column.name}:")
            lines.extend(INDENT + line for line in text.splitlines())
        else:
            lines.append(f"  {column.name}: {text}".rstrip())
    return "\n".join(lines) + "\n\n"


async def write_text(export: GraphExport) -> AsyncGenerator[bytes, None]:
    counts = ", ".join(f"{export.counts.get(s.name, 0)} {s.name}" for s in export.sections)
    yield f"Knowledge graph export of project {export.project_id}: {counts}\n".encode()
    for section in export.sections:
        heading = f"{section.title.upper()} ({export.counts.get(section.name, 0)})"
        yield f"\n{heading}\n{'=' * len(heading)}\n\n".encode()
        empty = True
        async for batch in section.batches:
            empty = False
            yield "".join(_block(section, row) for row in batch).encode()
        if empty:
            yield b"(none)\n"
