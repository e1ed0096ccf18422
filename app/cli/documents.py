"""`status` (health and pipeline), `documents` (a table, or the service's JSON) and `delete ID|FILE...`."""

from __future__ import annotations

import enum
import json
from datetime import UTC, datetime
from typing import Annotated, Any

import typer
from rich.table import Table

from app.cli.client import ServiceClient, path_part, service
from app.cli.control import AllMatching, Documents
from app.cli.errors import EXIT_FAILED, EXIT_USAGE, CliError
from app.cli.output import add_row, console, table
from app.cli.resolve import Target, resolve


class Status(enum.StrEnum):
    pending = "pending"
    processing = "processing"
    processed = "processed"
    failed = "failed"
    cancelled = "cancelled"


def _configured(provider: dict[str, Any], extra: str = "") -> str:
    name = provider.get("model") or "no model"
    return f"{name}{extra} ({'configured' if provider.get('configured') else 'NOT configured'})"


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{status} {counts.get(status, 0)}" for status in Status)


def status(ctx: typer.Context) -> None:
    """Health of the service and the project's pipeline (queue, documents in flight)."""
    client = service(ctx)
    health_response = client.call("GET", "/health", accept=(503,))
    health = health_response.json()
    migrations = health.get("migrations") or {}
    grid = table(title=f"Service {client.conn.url}")
    add_row(grid, "status", health.get("status"))
    add_row(grid, "database", health.get("database"))
    add_row(grid, "migrations", f"{migrations.get('current')} (head {migrations.get('head')})")
    add_row(grid, "LLM", _configured(health.get("llm") or {}))
    embedding = health.get("embedding") or {}
    add_row(grid, "embedding", _configured(embedding, f", dim {embedding.get('dim')}"))
    out = console()
    out.print(grid)
    if health_response.is_error:
        raise CliError(
            f"the service is not ready: database {health.get('database')}, "
            f"migrations {'ok' if migrations.get('ok') else 'behind'}"
        )
    pipeline = client.json("GET", "/pipeline", params={"project_id": client.project})
    queue = table(title=f"Pipeline of project {pipeline['project_id']}")
    add_row(queue, "queue", f"{pipeline['queue_depth']} (all projects: {pipeline['global_queue_depth']})")
    add_row(queue, "documents", _counts(pipeline["by_status"]))
    out.print(queue)
    if pipeline["in_flight"]:
        out.print(in_flight_table(pipeline["in_flight"]))


def _time_of_day(timestamp: str | None) -> str:
    """ "09:19:34" (UTC) of "2026-11-28T11:19:34.123456+02:00": documents in flight started minutes ago, and two
    whole ISO timestamps left a terminal of 80 columns no room for the file's name."""
    try:
        return datetime.fromisoformat(timestamp or "").astimezone(UTC).strftime("%H:%M:%S")
    except ValueError:
        return timestamp or ""


def in_flight_table(docs: list[dict[str, Any]]) -> Table:
    running = table("File", "Stage", "Worker", "Started", "Heartbeat", "Attempts", title="In flight (UTC)")
    for doc in docs:
        add_row(
            running,
            doc.get("file_path") or doc["id"],
            doc.get("stage") or "",
            doc["claimed_by"],
            _time_of_day(doc["started_at"]),
            _time_of_day(doc["heartbeat_at"]),
            doc["attempts"],
        )
    return running


WIDE_TABLE = 130  # terminal columns


def list_documents(
    ctx: typer.Context,
    status: Annotated[Status | None, typer.Option(help="Only documents in this state.", show_default=False)] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="Documents to show.")] = 100,
    offset: Annotated[int, typer.Option(min=0, help="Documents to skip (newest first).")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="The service's answer as JSON instead of a table.")] = False,
) -> None:
    """The project's documents, newest first."""
    client = service(ctx)
    params: dict[str, Any] = {"project_id": client.project, "limit": limit, "offset": offset}
    if status is not None:
        params["status"] = status.value
    page = client.json("GET", "/documents", params=params)
    if as_json:
        typer.echo(json.dumps(page, indent=2, ensure_ascii=False))
        return
    out = console()
    # the counts and the time fit beside a whole document id from this width on; narrower, they are left out (as
    # the web UI leaves them out at 800 px) rather than every column folded to a few letters (`--json` has all)
    wide = out.width >= WIDE_TABLE
    extra = ("Chunks", "Entities", "Relations", "Updated") if wide else ()
    grid = table("File", "Status", "Document", *extra, "Error", title=f"Documents of project {client.project}")
    for doc in page["documents"]:
        counts = (doc["chunks_count"], doc["entities_count"], doc["relations_count"])
        shown_extra = (*counts, doc["updated_at"][:19].replace("T", " ")) if wide else ()
        add_row(grid, doc["file_path"] or "(pasted text)", doc["status"], doc["id"], *shown_extra, doc["error"])
    out.print(grid)
    shown = len(page["documents"])
    out.print(f"{shown} shown of {page['total']}; project: {_counts(page['counts'])}", markup=False)


# ids per batch-delete request: the service's default MAX_DOCUMENTS_PER_REQUEST, as the web UI sends them
DELETE_BATCH = 100


def delete(ctx: typer.Context, documents: Documents = None, all_matching: AllMatching = False) -> None:
    """Delete documents with their chunks, and the graph parts only they supported. Several are deleted
    together: each entity or relation they touched is rebuilt once, not once per document."""
    if not documents:
        raise CliError("name the documents to delete", EXIT_USAGE)
    client = service(ctx)
    targets = resolve(client, documents, all_matching)
    if len(targets) == 1:
        failed = _delete_one_by_one(client, targets)
    else:
        failed = sum(
            _delete_batch(client, targets[start : start + DELETE_BATCH])
            for start in range(0, len(targets), DELETE_BATCH)
        )
    if failed:
        raise typer.Exit(EXIT_FAILED)


def _delete_batch(client: ServiceClient, targets: list[Target]) -> int:
    """One plan and one rebuild for these documents; the number that could not be deleted."""
    ids = [t.id for t in targets]
    try:
        result = client.json("POST", "/documents/delete", json={"project_id": client.project, "document_ids": ids})
    except CliError as exc:
        if exc.exit_code != EXIT_FAILED:  # unreachable or refused key: one at a time would fail the same way
            raise
        # one of them is unknown, still processing or refused, and the service deleted none: one at a time,
        # the others still go and each refusal is named
        return _delete_one_by_one(client, targets)
    typer.echo(f"deleted {len(ids)} documents ({_listed([t.label for t in targets])}): {_effects(result)} (each once)")
    return 0


def _delete_one_by_one(client: ServiceClient, targets: list[Target]) -> int:
    failed = 0
    for target in targets:
        try:
            result = client.json("DELETE", f"/documents/{path_part(target.id)}", params={"project_id": client.project})
        except CliError as exc:
            if exc.exit_code != EXIT_FAILED:  # unreachable or refused key: the next ones would fail the same way
                raise
            typer.echo(f"error: {target.name or target.id}: {exc.message}", err=True)
            failed += 1
            continue
        typer.echo(f"deleted {target.label}: {_effects(result)}")
    return failed


def _effects(result: dict[str, Any]) -> str:
    return (
        f"{result['chunks_deleted']} chunks, {result['entities_deleted']} entities and "
        f"{result['relations_deleted']} relations removed, {result['entities_rebuilt']} entities and "
        f"{result['relations_rebuilt']} relations rebuilt"
    )


def _listed(ids: list[str], shown: int = 5) -> str:
    return ", ".join(ids) if len(ids) <= shown else f"{', '.join(ids[:shown])} and {len(ids) - shown} more"
