"""CSV export: a zip holding one RFC 4180 file per section (entities.csv, relations.csv[, chunks.csv]).

Why a zip and not one file with `# ENTITIES` sections (the official layout): each member is a plain table
with a single header row, so spreadsheets, pandas and the `csv` module open it as is. Members are UTF-8
(no BOM), every field quoted only when needed (QUOTE_MINIMAL), records end with CRLF, so descriptions with
commas, quotes and newlines round-trip. Lists (source ids, file paths) are joined with `<SEP>` as LightRAG
stores them; vectors are JSON arrays. Text starting with = + - @ tab or CR gets a leading `'`
(formula-injection guard). The zip is produced while rows stream in: `zipfile` writes to a sink that is
drained after every batch, with data descriptors and zip64 sizes, so nothing is buffered beyond one batch.
"""

from __future__ import annotations

import csv
import io
import zipfile
from collections.abc import AsyncGenerator, Iterable
from typing import Any

from app.services.export.cells import neutralise
from app.services.export.model import Column, GraphExport, Kind, Row, joined

# Fastest deflate: several times quicker than the default level for a few percent more bytes
# (vectors, the bulk of a large export, hardly compress at any level).
COMPRESS_LEVEL = 1


class _Sink(io.RawIOBase):
    """A non-seekable file that keeps what was written until drained (zipfile then streams)."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self._parts.append(bytes(data))
        return len(data)

    def drain(self) -> bytes:
        out = b"".join(self._parts)
        self._parts.clear()
        return out


def _cell(column: Column, value: Any) -> Any:
    if column.kind is Kind.TEXT:
        return neutralise(value)
    if column.kind is Kind.LIST:
        return neutralise(joined(value))
    if column.kind is Kind.VECTOR:
        return value or ""
    return value


def _encode(records: Iterable[list[Any]]) -> bytes:
    """One batch as CSV bytes: compressing a batch at a time is far cheaper than a row at a time."""
    text = io.StringIO()
    csv.writer(text, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL).writerows(records)
    return text.getvalue().encode("utf-8")


def _record(columns: tuple[Column, ...], row: Row) -> list[Any]:
    return [_cell(c, v) for c, v in zip(columns, row, strict=True)]


async def write_csv(export: GraphExport) -> AsyncGenerator[bytes, None]:
    sink = _Sink()
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=COMPRESS_LEVEL) as archive:
        for section in export.sections:
            with archive.open(f"{section.name}.csv", "w", force_zip64=True) as member:
                member.write(_encode([[c.name for c in section.columns]]))
                async for batch in section.batches:
                    member.write(_encode(_record(section.columns, row) for row in batch))
                    if data := sink.drain():
                        yield data
            yield sink.drain()
    yield sink.drain()
