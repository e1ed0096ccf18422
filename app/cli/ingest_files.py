"""Local side of `ingest`: the files to send (folders walked recursively, filtered by glob and by the types the
service parses) and their upload in multipart batches to POST /documents/upload."""

from __future__ import annotations

import fnmatch
import mimetypes
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from app.cli.client import ServiceClient, error_body, error_of
from app.cli.errors import EXIT_USAGE, CliError
from app.services.ingest.parsing.formats import SUPPORTED_EXTENSIONS

BATCH_BYTES = 16 * 1024 * 1024  # well under the service's default MAX_REQUEST_BYTES (50 MiB)
_SINGLE_REASON = re.compile(r"^No document was accepted: #0: ")


@dataclass
class FileResult:
    """One local file and what became of it."""

    path: Path
    size: int
    document_id: str | None = None
    status: str = "waiting"  # upload: pending, duplicate, rejected; then processing, processed, failed
    error: str | None = None
    duplicate: bool = False
    update_id: str | None = None  # the file changed: the update of its document it queued


@dataclass
class Selection:
    files: list[FileResult]
    skipped: list[tuple[Path, str]]


def _matches(relative: str, name: str, globs: list[str]) -> bool:
    return not globs or any(fnmatch.fnmatch(relative, g) or fnmatch.fnmatch(name, g) for g in globs)


def _walk(folder: Path) -> Iterator[Path]:
    """Files under `folder`, sorted, without hidden files and folders; symbolic links to folders not followed."""
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if not name.startswith("."):
                yield Path(root) / name


def select_files(paths: list[Path], globs: list[str]) -> Selection:
    """The supported files among `paths` (folders: recursively, kept when a glob matches the name or the path
    relative to the folder); unsupported ones are listed as skipped with the reason."""
    files: list[FileResult] = []
    skipped: list[tuple[Path, str]] = []
    seen: set[Path] = set()
    for given in paths:
        if given.is_dir():
            candidates = [p for p in _walk(given) if _matches(p.relative_to(given).as_posix(), p.name, globs)]
        elif given.is_file():
            candidates = [given]
        else:
            raise CliError(f"{given}: no such file or directory", EXIT_USAGE)
        for path in candidates:
            real = path.resolve()
            if real in seen or not path.is_file():
                continue
            seen.add(real)
            suffix = path.suffix.lower()
            if suffix not in SUPPORTED_EXTENSIONS:
                skipped.append((path, f"unsupported file type {suffix or '(none)'}"))
                continue
            files.append(FileResult(path, path.stat().st_size))
    return Selection(files, skipped)


def batches(files: list[FileResult], max_files: int, max_bytes: int = BATCH_BYTES) -> Iterator[list[FileResult]]:
    batch: list[FileResult] = []
    size = 0
    for item in files:
        if batch and (len(batch) >= max_files or size + item.size > max_bytes):
            yield batch
            batch, size = [], 0
        batch.append(item)
        size += item.size
    if batch:
        yield batch


def _multipart(batch: list[FileResult]) -> list[tuple[str, tuple[str, bytes, str]]]:
    """The multipart parts of the readable files of `batch`; unreadable ones are marked rejected."""
    parts = []
    for item in batch:
        try:
            data = item.path.read_bytes()
        except OSError as exc:
            item.status, item.error = "rejected", f"cannot read the file: {exc.strerror or exc}"
            continue
        content_type = mimetypes.guess_type(item.path.name)[0] or "application/octet-stream"
        parts.append(("files", (item.path.name, data, content_type)))
    return parts


def _apply(batch: list[FileResult], answers: list[dict]) -> None:
    if len(answers) != len(batch):
        raise CliError(f"the service answered {len(answers)} results for {len(batch)} uploaded files")
    for item, answer in zip(batch, answers, strict=True):
        item.document_id = answer.get("id")
        item.status = answer.get("status", "pending")
        item.error = answer.get("error")
        item.duplicate = item.status == "duplicate"
        item.update_id = answer.get("update_id")


def upload(client: ServiceClient, batch: list[FileResult], *, update: bool = False) -> None:
    """Send one batch; a batch the service refuses as a whole (every file unparsable or too large) is retried
    file by file so that each file gets its own reason."""
    parts = _multipart(batch)
    batch = [item for item in batch if item.status != "rejected"]
    if not batch:
        return
    response = client.call(
        "POST",
        "/documents/upload",
        files=parts,
        accept=(413, 422),
        data={"project_id": client.project, "wait": "false", "update": "true" if update else "false"},
    )
    if not response.is_error:
        _apply(batch, response.json()["documents"])
        return
    code, detail = error_body(response)
    if code == "too_many_documents":
        raise CliError(f"{error_of(response).message} (lower --batch-size)")
    if code not in ("invalid_documents", "document_too_large", "payload_too_large"):
        raise error_of(response)  # the request itself is wrong (a bad project id, say): no file would do better
    if len(batch) > 1:
        for item in batch:
            upload(client, [item], update=update)
        return
    batch[0].status, batch[0].error = "rejected", _SINGLE_REASON.sub("", detail)


def upload_all(
    client: ServiceClient,
    files: list[FileResult],
    batch_size: int,
    on_batch: Callable[[int], None],
    *,
    update: bool = False,
) -> None:
    for batch in batches(files, batch_size):
        upload(client, batch, update=update)
        on_batch(len(batch))
