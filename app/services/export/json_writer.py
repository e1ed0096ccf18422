"""JSON export, written incrementally: `{"project", "counts", "entities": [...], "relations": [...],
"chunks": [...]}` (chunks only when asked). One object per row on its own line; lists stay JSON arrays and
vectors are emitted as the JSON arrays the database already produced (no float re-formatting)."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any

from app.services.export.model import GraphExport, Kind, Row, Section

_ENCODER = json.JSONEncoder(ensure_ascii=False)


def _object(section: Section, row: Row) -> str:
    """One row as a JSON object: one C-accelerated encode per row; the vector is spliced in as the JSON
    array text the database produced."""
    columns = section.columns
    if columns[-1].kind is not Kind.VECTOR:
        return _ENCODER.encode(dict(zip((c.name for c in columns), row, strict=True)))
    head = _ENCODER.encode(dict(zip((c.name for c in columns[:-1]), row[:-1], strict=True)))
    return f'{head[:-1]}, "{columns[-1].name}": {row[-1] if row[-1] is not None else "null"}}}'


def _head(export: GraphExport) -> dict[str, Any]:
    return {"project": export.project_id, "counts": {s.name: export.counts.get(s.name, 0) for s in export.sections}}


async def write_json(export: GraphExport) -> AsyncGenerator[bytes, None]:
    head = _ENCODER.encode(_head(export))
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
