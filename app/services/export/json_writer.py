"""JSON export, written incrementally: `{"project", "counts", "entities": [...], "relations": [...],
"chunks": [...]}` (chunks only when asked). One object per row on its own line; lists stay JSON arrays and
vectors are emitted as the JSON arrays the database already produced (no float re-formatting)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from app.services.export.model import GraphExport, Kind, Row, Section


def _object(section: Section, row: Row) -> str:
    parts = []
    for column, value in zip(section.columns, row, strict=True):
        if column.kind is Kind.VECTOR:
            encoded = value if value is not None else "null"
        else:
            encoded = json.dumps(value, ensure_ascii=False)
        parts.append(f'"{column.name}": {encoded}')
    return "{" + ", ".join(parts) + "}"


def _head(export: GraphExport) -> dict[str, Any]:
    return {"project": export.project_id, "counts": {s.name: export.counts.get(s.name, 0) for s in export.sections}}


async def write_json(export: GraphExport) -> AsyncIterator[bytes]:
    head = json.dumps(_head(export), ensure_ascii=False)
    yield head[:-1].encode()  # leave the object open
    for section in export.sections:
        yield f', "{section.name}": ['.encode()
        separator = "\n"
        async for batch in section.batches:
            body = [separator + _object(section, batch[0])]
            body.extend(",\n" + _object(section, row) for row in batch[1:])
            separator = ",\n"
            yield "".join(body).encode()
        yield b"\n]"
    yield b"}\n"
