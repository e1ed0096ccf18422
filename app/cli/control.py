"""`cancel ID|FILE...` and `retry ID|FILE...` (or `retry --all-failed`): the pipeline's queue controls."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer

from app.cli.client import ServiceClient, path_part, service
from app.cli.errors import EXIT_FAILED, EXIT_USAGE, CliError
from app.cli.resolve import Target, resolve

Documents = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="ID|FILE...",
        show_default=False,
        help="Document ids, or file names (a name of several documents needs --all-matching).",
    ),
]
AllMatching = Annotated[bool, typer.Option("--all-matching", help="Act on every document a file name matches.")]


def _each(client: ServiceClient, targets: list[Target], act: Callable[[Target], str]) -> None:
    """Run `act` on every target, printing its line; the refused ones are named on stderr (exit 1)."""
    failed = 0
    for target in targets:
        try:
            typer.echo(act(target))
        except CliError as exc:
            if exc.exit_code != EXIT_FAILED:  # unreachable or refused key: the next ones would fail the same way
                raise
            typer.echo(f"error: {target.id if target.name is None else target.name}: {exc.message}", err=True)
            failed += 1
    if failed:
        raise typer.Exit(EXIT_FAILED)


def cancel(ctx: typer.Context, documents: Documents = None, all_matching: AllMatching = False) -> None:
    """Cancel pending documents (at once) or processing ones (their worker stops before the graph merge)."""
    if not documents:
        raise CliError("name the documents to cancel", EXIT_USAGE)
    client = service(ctx)

    def act(target: Target) -> str:
        result = client.json("POST", f"/documents/{path_part(target.id)}/cancel", json={"project_id": client.project})
        if result["cancel_requested"]:
            return f"cancelling {target.label}: its worker stops it before the graph merge"
        return f"cancelled {target.label}"

    _each(client, resolve(client, documents, all_matching), act)


def retry(
    ctx: typer.Context,
    documents: Documents = None,
    all_matching: AllMatching = False,
    all_failed: Annotated[
        bool, typer.Option("--all-failed", help="Retry every failed document of the project.")
    ] = False,
) -> None:
    """Put failed or cancelled documents back in the queue (extractions already cached are not asked again)."""
    if bool(documents) == all_failed:
        raise CliError("name the documents to retry, or pass --all-failed (not both)", EXIT_USAGE)
    client = service(ctx)
    if all_failed:
        ids = client.json("POST", "/documents/retry-failed", json={"project_id": client.project})["document_ids"]
        typer.echo(
            f"retried {len(ids)} failed document{'s' if len(ids) != 1 else ''}" + (f": {', '.join(ids)}" if ids else "")
        )
        return

    def act(target: Target) -> str:
        result = client.json("POST", f"/documents/{path_part(target.id)}/retry", json={"project_id": client.project})
        return f"retried {target.label}: {result['status']}"

    _each(client, resolve(client, documents or [], all_matching), act)
