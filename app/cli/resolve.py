"""Documents named on the command line by id or by file name.

An argument that is a document id of the project is that document. Otherwise it is matched against the
documents' file names (the name as stored, else its last path component: uploads store only the file's name).
A name of several documents is refused with their list unless the caller acts on all of them; an argument
matching nothing is passed on as an id, so the service's own "not found" names it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

import typer

from app.cli.client import ServiceClient, path_part
from app.cli.errors import EXIT_USAGE, CliError

PAGE = 1000
FEW = 10  # up to this many arguments are looked up one by one, more by listing the project's pages


@dataclass(frozen=True)
class Target:
    """A document to act on, and the file name it was given by (None: given by id)."""

    id: str
    name: str | None = None

    @property
    def label(self) -> str:
        return self.id if self.name is None else f"{self.id} ({self.name})"


def _all_documents(client: ServiceClient) -> list[dict[str, Any]]:
    documents: list[dict[str, Any]] = []
    while True:
        page = client.json(
            "GET", "/documents", params={"project_id": client.project, "limit": PAGE, "offset": len(documents)}
        )
        documents.extend(page["documents"])
        if not page["documents"] or len(documents) >= page["total"]:
            return documents


def _known_ids(client: ServiceClient, given: list[str]) -> tuple[set[str], list[dict[str, Any]] | None]:
    """The arguments that are document ids, and the project's documents when they had to be listed."""
    if len(given) > FEW:
        documents = _all_documents(client)
        return {d["id"] for d in documents} & set(given), documents
    found = set()
    for value in given:
        response = client.call(
            "GET", f"/documents/{path_part(value)}", params={"project_id": client.project}, accept=(404, 422)
        )
        if not response.is_error:
            found.add(value)
    return found, None


def _named(documents: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    exact = [d for d in documents if d.get("file_path") == name]
    if exact:
        return exact
    base = PurePath(name).name
    return [d for d in documents if base and d.get("file_path") == base]


def resolve(client: ServiceClient, given: list[str], all_matching: bool) -> list[Target]:
    """The documents `given` names, in order and without repeats; a file name of several documents is refused
    (exit 2, their list on stderr) unless `all_matching`."""
    given = list(dict.fromkeys(given))
    ids, documents = _known_ids(client, given)
    names = [value for value in given if value not in ids]
    if names and documents is None:
        documents = _all_documents(client)
    targets: list[Target] = []
    for value in given:
        matches = [] if value in ids else _named(documents or [], value)
        if not matches:
            targets.append(Target(value))
            continue
        if len(matches) > 1 and not all_matching:
            _list_matches(value, matches)
            raise CliError(
                f"'{value}' names {len(matches)} documents (listed above): give their ids, or pass --all-matching",
                EXIT_USAGE,
            )
        targets.extend(Target(d["id"], d["file_path"]) for d in matches)
    return list({t.id: t for t in targets}.values())


def _list_matches(name: str, matches: list[dict[str, Any]]) -> None:
    typer.echo(f"'{name}' is the file name of {len(matches)} documents:", err=True)
    for doc in matches:
        typer.echo(f"  {doc['id']}  {doc['status']:<10}  updated {doc['updated_at'][:19].replace('T', ' ')}", err=True)
