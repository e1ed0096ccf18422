"""The dispatcher: export format → writer, media type and file extension."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from enum import StrEnum

from app.services.export.csv_writer import write_csv
from app.services.export.json_writer import write_json
from app.services.export.markdown import write_markdown
from app.services.export.model import GraphExport
from app.services.export.text import write_text
from app.services.export.xlsx_writer import write_xlsx


class ExportFormat(StrEnum):
    csv = "csv"
    xlsx = "xlsx"
    md = "md"
    txt = "txt"
    json = "json"


Writer = Callable[[GraphExport], AsyncGenerator[bytes, None]]


@dataclass(frozen=True, slots=True)
class FormatSpec:
    writer: Writer
    media_type: str
    extension: str


FORMATS: dict[ExportFormat, FormatSpec] = {
    ExportFormat.csv: FormatSpec(write_csv, "application/zip", "zip"),
    ExportFormat.xlsx: FormatSpec(
        write_xlsx, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "xlsx"
    ),
    ExportFormat.md: FormatSpec(write_markdown, "text/markdown; charset=utf-8", "md"),
    ExportFormat.txt: FormatSpec(write_text, "text/plain; charset=utf-8", "txt"),
    ExportFormat.json: FormatSpec(write_json, "application/json", "json"),
}
