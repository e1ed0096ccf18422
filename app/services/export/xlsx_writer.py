"""Excel export: sheets Entities, Relations (and Chunks), written by XlsxWriter in constant-memory mode.

XlsxWriter flushes every finished row to a temporary file, so memory stays flat; the workbook is
assembled on disk in a private temporary directory, streamed out in blocks, and the directory removed
(also when the client goes away mid-download). The synchronous XlsxWriter calls run in a worker thread
so a large export never stalls the event loop. Text is always written with `write_string` (nothing is
ever interpreted as a formula), formula-looking text also gets a leading `'`, cells over Excel's
32,767-character limit are cut with a visible marker, CRLF/CR line breaks become LF.
Header row bold, frozen and filterable.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import tempfile
from collections.abc import AsyncGenerator
from typing import Any

import xlsxwriter
from xlsxwriter.worksheet import Worksheet

from app.services.export.cells import fit_excel_cell, neutralise
from app.services.export.model import Column, GraphExport, Kind, Row, joined

READ_BLOCK = 256 * 1024
# Excel breaks lines in a cell on LF; a CR would be stored as the escape `_x000D_`.
_NEWLINES = re.compile(r"\r\n?")


def _write_rows(sheet: Worksheet, columns: tuple[Column, ...], rows: list[Row], first_row: int) -> int:
    for r, row in enumerate(rows, start=first_row):
        for c, (column, value) in enumerate(zip(columns, row, strict=True)):
            if column.kind is Kind.NUMBER:
                sheet.write_number(r, c, value)
                continue
            if column.kind is Kind.LIST:
                value = joined(value)
            elif value is None:
                continue
            if column.kind is not Kind.VECTOR:
                value = _NEWLINES.sub("\n", neutralise(value))
            if value:
                sheet.write_string(r, c, fit_excel_cell(value))
    return first_row + len(rows)


def _add_sheet(book: xlsxwriter.Workbook, title: str, columns: tuple[Column, ...], header: Any) -> Worksheet:
    sheet = book.add_worksheet(title)
    for c, column in enumerate(columns):
        sheet.set_column(c, c, column.width)
        sheet.write_string(0, c, column.name, header)
    sheet.freeze_panes(1, 0)
    return sheet


async def write_xlsx(export: GraphExport) -> AsyncGenerator[bytes, None]:
    workdir = tempfile.mkdtemp(prefix="lrs-export-")
    try:
        path = os.path.join(workdir, "graph.xlsx")
        book = xlsxwriter.Workbook(path, {"constant_memory": True, "tmpdir": workdir})
        header = book.add_format({"bold": True, "bottom": 1})
        for section in export.sections:
            sheet = _add_sheet(book, section.title, section.columns, header)
            next_row = 1
            async for batch in section.batches:
                next_row = await asyncio.to_thread(_write_rows, sheet, section.columns, batch, next_row)
            sheet.autofilter(0, 0, max(next_row - 1, 0), len(section.columns) - 1)
        await asyncio.to_thread(book.close)
        handle = await asyncio.to_thread(open, path, "rb")
        try:
            while block := await asyncio.to_thread(handle.read, READ_BLOCK):
                yield block
        finally:
            handle.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
