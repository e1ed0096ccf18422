"""The `lightrag-service` command: global connection options, then one command per module of this package.

A new command is a function in its own module, registered below with `cli.command("name")(function)` (or a
typer sub-app with `cli.add_typer`). Commands that call the service take `ctx: typer.Context` and open
`app.cli.client.service(ctx)`; raising CliError anywhere prints one line on stderr and exits with its code.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from app.cli import check_llm, control, documents, export, ingest, mcp, projects, query, server
from app.cli.client import DEFAULT_URL, Connection
from app.cli.errors import CliError


class _ReportingGroup(TyperGroup):
    """Turns a CliError raised by any command into one line on stderr and its exit code, never a traceback."""

    def invoke(self, ctx: Any) -> Any:  # Any: the base class takes click's Context, which typer vendors privately
        try:
            return super().invoke(ctx)
        except CliError as exc:
            typer.echo(f"error: {exc.message}", err=True)
            raise typer.Exit(exc.exit_code) from None


cli = typer.Typer(
    cls=_ReportingGroup,
    name="lightrag-service",
    help="Serve the LightRAG service, or talk to a running one: ingest, query, inspect, export.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _check_url(value: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise typer.BadParameter(f"{value!r} is not an http:// or https:// URL")
    return value.rstrip("/")


@cli.callback()
def connection_options(
    ctx: typer.Context,
    url: Annotated[
        str, typer.Option("--url", envvar="LIGHTRAG_URL", callback=_check_url, help="Base URL of the service.")
    ] = DEFAULT_URL,
    api_key: Annotated[
        str | None,
        typer.Option(
            "--api-key",
            envvar="LIGHTRAG_API_KEY",
            show_default=False,
            help="API key, sent as 'Authorization: Bearer <key>'.",
        ),
    ] = None,
    project: Annotated[
        str, typer.Option("--project", "-p", envvar="LIGHTRAG_PROJECT", help="Project the commands act on.")
    ] = "default",
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout", envvar="LIGHTRAG_TIMEOUT", min=0.1, help="Seconds to wait for each answer of the service."
        ),
    ] = 300.0,
) -> None:
    ctx.obj = Connection(url=url, api_key=api_key or None, project=project, timeout=timeout)


cli.command("serve")(server.serve)
cli.command("worker")(server.worker)
cli.command("mcp")(mcp.mcp)
cli.command("ingest")(ingest.ingest)
cli.command("query")(query.query)
cli.command("status")(documents.status)
cli.command("documents")(documents.list_documents)
cli.command("delete")(documents.delete)
cli.command("cancel")(control.cancel)
cli.command("retry")(control.retry)
cli.command("export")(export.export)
cli.command("check-llm")(check_llm.check_llm)
cli.add_typer(projects.projects_app, name="projects")


def main() -> None:
    cli()
