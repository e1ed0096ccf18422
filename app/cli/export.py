"""`export --format xlsx -o FILE`: the project's graph streamed into a file (complete, or not written at all)."""

from __future__ import annotations

import contextlib
import enum
import os
from pathlib import Path
from typing import Annotated

import typer

from app.cli.client import service
from app.cli.errors import EXIT_USAGE, CliError

CHUNK = 1 << 16


class Format(enum.StrEnum):
    csv = "csv"
    xlsx = "xlsx"
    md = "md"
    txt = "txt"
    json = "json"


EXTENSIONS = {Format.csv: "zip"}


def export(
    ctx: typer.Context,
    fmt: Annotated[
        Format, typer.Option("--format", "-f", help="csv (a zip of one CSV per table), xlsx, md, txt or json.")
    ] = Format.xlsx,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="File to write (default: <project>.<ext> in the current folder).", show_default=False
        ),
    ] = None,
    include_vectors: Annotated[bool, typer.Option("--include-vectors", help="Add each item's embedding.")] = False,
    include_chunks: Annotated[bool, typer.Option("--include-chunks", help="Add the project's chunks.")] = False,
) -> None:
    """Download the project's knowledge graph (entities, relations, optionally chunks) as a file."""
    client = service(ctx)
    target = output or Path(f"{client.project}.{EXTENSIONS.get(fmt, fmt.value)}")
    if target.is_dir():
        raise CliError(f"{target} is a folder: give a file name with -o", EXIT_USAGE)
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise CliError(f"{folder}: no such folder", EXIT_USAGE)
    params = {
        "project_id": client.project,
        "format": fmt.value,
        "include_vectors": include_vectors,
        "include_chunks": include_chunks,
    }
    partial = folder / f".{target.name}.{os.getpid()}.part"  # renamed to the target once complete
    written = 0
    try:
        with open(partial, "wb") as sink, client.stream("GET", "/export", params=params) as response:
            for block in response.iter_bytes(CHUNK):
                sink.write(block)
                written += len(block)
        os.replace(partial, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)
    typer.echo(f"wrote {target} ({written} bytes, {fmt.value})")
