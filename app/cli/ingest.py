"""`ingest PATH...`: upload files and folders, follow their processing with a progress bar, print a summary."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from app.cli.client import ServiceClient, path_part, service
from app.cli.errors import EXIT_FAILED, CliError
from app.cli.ingest_files import FileResult, select_files, upload_all
from app.cli.output import add_row, console, table

PAGE = 1000
FEW = 10  # up to this many unfinished documents are polled one by one, more by listing the project's pages
DONE = ("processed", "failed", "cancelled")  # the service's final states: nothing changes them but a retry


def _unfinished(files: list[FileResult]) -> dict[str, list[FileResult]]:
    """Unfinished files by what to follow: the document, or the update a changed file queued."""
    waiting: dict[str, list[FileResult]] = {}
    for item in files:
        followed = item.update_id or item.document_id
        if followed and item.status not in (*DONE, "rejected"):
            waiting.setdefault(followed, []).append(item)
    return waiting


def _states(client: ServiceClient, ids: list[str], updates: set[str] | None = None) -> dict[str, dict | None]:
    """The current record of each document or update (None: it no longer exists). Updates are not listed
    with the documents: they are read one by one."""
    updates = updates or set()
    params = {"project_id": client.project}
    if len(ids) <= FEW or set(ids) <= updates:
        found: dict[str, dict | None] = {}
        for doc_id in ids:
            response = client.call("GET", f"/documents/{path_part(doc_id)}", params=params, accept=(404,))
            found[doc_id] = None if response.status_code == 404 else response.json()
        return found
    wanted, offset = set(ids) - updates, 0
    states: dict[str, dict | None] = {}
    while len(states) < len(wanted):  # newest first: fresh uploads are on the first page
        page = client.json("GET", "/documents", params={**params, "limit": PAGE, "offset": offset})
        states.update({d["id"]: d for d in page["documents"] if d["id"] in wanted})
        offset += len(page["documents"])
        if not page["documents"] or offset >= page["total"]:
            break
    listed = {doc_id: states.get(doc_id) for doc_id in wanted}
    return listed | _states(client, [i for i in ids if i in updates], updates)


def _follow(
    client: ServiceClient,
    files: list[FileResult],
    progress: Progress,
    task: TaskID,
    poll_interval: float,
    max_wait: float | None,
) -> bool:
    """Poll until every uploaded document is in a final state; False if `max_wait` ran out first."""
    deadline = None if max_wait is None else time.monotonic() + max_wait
    while waiting := _unfinished(files):
        updates = {f.update_id for f in files if f.update_id}
        for doc_id, state in _states(client, list(waiting), updates).items():
            for item in waiting[doc_id]:
                if state is None:
                    item.status, item.error = "failed", "the document was deleted while it was processed"
                else:
                    item.status, item.error = state["status"], state.get("error")
        remaining = _unfinished(files)
        busy = sum(1 for group in remaining.values() if group[0].status == "processing")
        progress.update(
            task,
            completed=len(_tracked(files)) - len(remaining),
            description=progress_label(files, running=busy, queued=len(remaining) - busy),
        )
        if not remaining:
            break
        if deadline is not None and time.monotonic() >= deadline:
            return False
        time.sleep(poll_interval)
    progress.update(task, description=progress_label(files))
    return True


def progress_label(files: list[FileResult], running: int = 0, queued: int = 0) -> str:
    """The bar's label as rich markup: "16 done, 2 failed, 1 rejected" in red when anything was not done, so a
    bar full of failures never reads as success; named as the summary table names them (a rejected file was
    refused at upload, a failed document failed in processing); while waiting, what is still running and queued."""
    counts = {status: sum(1 for f in files if f.status == status) for status in ("failed", "rejected", "cancelled")}
    parts = [f"{sum(1 for f in files if f.status == 'processed')} done"]
    parts += [f"{number} {status}" for status, number in counts.items() if number]
    if running or queued:
        parts.append(f"{running} running, {queued} queued")
    label = ", ".join(parts)
    return f"[bold red]{label}[/]" if any(counts.values()) else label


def _tracked(files: list[FileResult]) -> set[str]:
    return {f.update_id or f.document_id for f in files if f.document_id and f.status != "rejected"}


def _summary(out: Console, files: list[FileResult], skipped: int, waited: bool) -> bool:
    """Print the counts and the files not processed (failed, cancelled, rejected); True if there are none."""
    counts = table("Outcome", "Files", title="Summary")
    outcomes = {
        "processed": sum(1 for f in files if f.status == "processed" and not f.duplicate),
        "already stored (duplicate)": sum(1 for f in files if f.duplicate and f.status in ("processed", "duplicate")),
        "queued": sum(1 for f in files if f.status in ("pending", "processing")),
        "failed": sum(1 for f in files if f.status == "failed"),
        "cancelled": sum(1 for f in files if f.status == "cancelled"),
        "rejected": sum(1 for f in files if f.status == "rejected"),
        "skipped (unsupported type)": skipped,
    }
    for outcome, number in outcomes.items():
        if number or (waited and outcome in ("processed", "failed")):
            add_row(counts, outcome, number)
    out.print(counts)
    failures = [f for f in files if f.status in ("failed", "cancelled", "rejected")]
    if failures:
        grid = table("File", "Document", "Status", "Reason", title="Not processed")
        for item in failures:
            add_row(grid, item.path, item.document_id or "-", item.status, item.error or "")
        out.print(grid)
    return not failures


def ingest(
    ctx: typer.Context,
    paths: Annotated[list[Path], typer.Argument(help="Files and folders (walked recursively).", show_default=False)],
    glob: Annotated[
        list[str] | None,
        typer.Option("--glob", "-g", help="Keep only folder files whose name or relative path matches (repeatable)."),
    ] = None,
    wait: Annotated[
        bool, typer.Option("--wait/--no-wait", help="Follow processing to the end, or just enqueue.")
    ] = True,
    batch_size: Annotated[int, typer.Option(min=1, help="Files per upload request.")] = 20,
    update: Annotated[
        bool,
        typer.Option(
            "--update/--no-update",
            help="A file named as a stored document updates that document (only its changed chunks are "
            "extracted), or is stored as a new document (file names are kept without their folder, so two "
            "folders' same-named files would update each other: hence opt-in).",
        ),
    ] = False,
    poll_interval: Annotated[float, typer.Option(min=0.01, help="Seconds between progress checks.")] = 1.0,
    max_wait: Annotated[
        float | None, typer.Option(min=0, help="Stop waiting after this many seconds.", show_default="no limit")
    ] = None,
) -> None:
    """Upload files and folders (.txt, .md, .pdf, .docx, .html), then follow them until processed, failed or
    cancelled."""
    out = console()
    selection = select_files(paths, glob or [])
    for path, reason in selection.skipped:
        typer.echo(f"skipped {path}: {reason}", err=True)
    files = selection.files
    if not files:
        raise CliError("no supported file to ingest", EXIT_FAILED)
    client = service(ctx)
    with Progress(
        TextColumn("{task.description:<40}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=out,
        transient=False,
    ) as progress:
        sent = progress.add_task("uploading", total=len(files))
        upload_all(client, files, batch_size, lambda n: progress.advance(sent, n), update=update)
        finished = True
        if wait and _tracked(files):
            task = progress.add_task("processing", total=len(_tracked(files)))
            try:
                finished = _follow(client, files, progress, task, poll_interval, max_wait)
            except KeyboardInterrupt:
                progress.stop()
                _summary(out, files, len(selection.skipped), waited=True)
                typer.echo("stopped waiting: the service keeps processing the queued documents", err=True)
                raise typer.Exit(130) from None
    if not wait:
        _enqueued(out, files)
    ok = _summary(out, files, len(selection.skipped), waited=wait)
    if not finished:
        raise CliError(f"documents still queued after {max_wait:g} s; follow them with `lightrag-service documents`")
    if not ok:
        raise typer.Exit(EXIT_FAILED)


def _enqueued(out: Console, files: list[FileResult]) -> None:
    grid = table("File", "Document", "Status", title="Enqueued")
    for item in files:
        if item.status != "rejected":
            add_row(grid, item.path, item.document_id, item.status)
    out.print(grid)
    out.print("Follow their processing with `lightrag-service documents` or `lightrag-service status`.", markup=False)
