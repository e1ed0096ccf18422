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
    return grid


def add_row(grid: Table, *values: Any) -> None:
    grid.add_row(*(cell(v) for v in values))
