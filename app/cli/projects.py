"""`projects` (the projects the key may use) and `projects create ID`."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from app.cli.client import service
from app.cli.output import add_row, console, table

projects_app = typer.Typer(
    help="List projects (no sub-command), or create one.", invoke_without_command=True, no_args_is_help=False
)


WIDE_TABLE = 100  # terminal columns from which the chunk, entity and relation counts fit beside the rest


def _print(projects: list[dict[str, Any]], title: str) -> None:
    out = console()
    wide = out.width >= WIDE_TABLE  # narrower: left out rather than every column folded to a few letters
    grid = table(
        "Project", "Name", "Documents", *(("Chunks", "Entities", "Relations") if wide else ()), "Created", title=title
    )
    for p in projects:
        counts = p["counts"]
        graph = (counts["chunks"], counts["entities"], counts["relations"]) if wide else ()
        add_row(grid, p["id"], p["name"], counts["documents"], *graph, p["created_at"][:19].replace("T", " "))
    out.print(grid)


@projects_app.callback()
def list_projects(ctx: typer.Context) -> None:
    """List the projects (those the API key may use)."""
    if ctx.invoked_subcommand is None:
        _print(service(ctx).json("GET", "/projects")["projects"], "Projects")


@projects_app.command("create")
def create_project(
    ctx: typer.Context,
    project_id: Annotated[str, typer.Argument(metavar="ID", help="Letters, digits, '_' and '-'.", show_default=False)],
    name: Annotated[str | None, typer.Option(help="Display name (default: the id).", show_default=False)] = None,
) -> None:
    """Create a project."""
    body: dict[str, Any] = {"id": project_id}
    if name is not None:
        body["name"] = name
    _print([service(ctx).json("POST", "/projects", json=body)], "Created")
