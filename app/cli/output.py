"""Terminal output: rich consoles made per command (so they see the current stdout and COLUMNS) and table cells
that are never read as rich markup (file names and service messages may contain '[...]')."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text


def console() -> Console:
    return Console(highlight=False)


def cell(value: Any) -> Text:
    return Text("" if value is None else str(value))


# Ids and times are copied or read as one token: their columns never fold (a document id broken over two lines
# pasted into `delete` names no document); the other columns fold to make room.
WHOLE_COLUMNS = frozenset({"Document", "Project", "Updated", "Created", "Started", "Heartbeat"})


def table(*columns: str, title: str | None = None) -> Table:
    """A table with these column headers (no columns: a two-column name/value table without headers)."""
    headers = columns or ("", "")
    grid = Table(
        *headers,
        title=None if title is None else Text(title, style="bold"),
        title_justify="left",
        header_style="bold",
        show_header=bool(columns),
    )
    for column in grid.columns:
        column.overflow = "fold"
        column.no_wrap = column.header in WHOLE_COLUMNS
    return grid


def add_row(grid: Table, *values: Any) -> None:
    cells = [cell(v) for v in values]
    for column, text in zip(grid.columns, cells, strict=False):
        if column.header in WHOLE_COLUMNS:
            column.min_width = max(column.min_width or 0, text.cell_len)
    grid.add_row(*cells)
