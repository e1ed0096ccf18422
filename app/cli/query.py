"""`query "question"`: the answer (streamed as it is written with --stream), the documents it cites and a note
of its sentences the sources do not support; or with --context-only the retrieved entities, relations and
chunks."""

from __future__ import annotations

import enum
import json
from collections.abc import Iterator
from typing import Annotated, Any

import httpx
import typer
from rich.console import Console

from app.cli.client import service
from app.cli.errors import CliError
from app.cli.output import add_row, console, table
from app.domain.citation_text import cited_references

EXCERPT = 160


class Mode(enum.StrEnum):
    local = "local"
    global_ = "global"
    hybrid = "hybrid"
    mix = "mix"
    naive = "naive"
    bypass = "bypass"


def server_events(response: httpx.Response) -> Iterator[dict[str, Any]]:
    """The JSON payloads of a Server-Sent Events stream (`data:` lines of one event joined by newlines)."""
    data: list[str] = []
    for line in response.iter_lines():
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif not line and data:
            yield json.loads("\n".join(data))
            data = []
    if data:
        yield json.loads("\n".join(data))


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT else flat[: EXCERPT - 1] + "…"


def _print_context(out: Console, context: dict[str, Any]) -> None:
    entities = table("Entity", "Type", "Description", title=f"Entities ({len(context.get('entities', []))})")
    for e in context.get("entities", []):
        add_row(entities, e["name"], e["type"], _excerpt(e["description"]))
    relations = table(
        "Source", "Target", "Keywords", "Description", title=f"Relations ({len(context.get('relations', []))})"
    )
    for r in context.get("relations", []):
        add_row(relations, r["source"], r["target"], r["keywords"], _excerpt(r["description"]))
    chunks = table("Ref", "File", "Content", title=f"Chunks ({len(context.get('chunks', []))})")
    for c in context.get("chunks", []):
        add_row(chunks, c.get("reference_id") or "-", c.get("file_path") or c["document_id"], _excerpt(c["content"]))
    for grid in (entities, relations, chunks):
        out.print(grid)


def _print_references(result: dict[str, Any]) -> None:
    references = cited_references(result)
    if references:
        typer.echo("\nReferences:")
    for ref in references:
        source = ref.get("file_path") or ref["document_id"]
        typer.echo(f"  [{ref['reference_id']}] {source} ({ref['document_id']})")
    unsupported = [c["text"] for c in result.get("claims") or [] if c.get("support") == "unsupported"]
    if unsupported:
        count = f"{len(unsupported)} sentence{'s' if len(unsupported) > 1 else ''}"
        typer.echo(f"\nNote: {count} not supported by the sources:")
        for text in unsupported:
            typer.echo(f"  - {_excerpt(text)}")


def _streamed(ctx: typer.Context, body: dict[str, Any]) -> dict[str, Any]:
    """Print the answer as it arrives; return the final event (context, references)."""
    final: dict[str, Any] | None = None
    wrote = False
    with service(ctx).stream("POST", "/query/stream", json=body) as response:
        for event in server_events(response):
            kind = event.get("type")
            if kind == "chunk":
                typer.echo(event.get("text", ""), nl=False)
                wrote = True
            elif kind == "error":
                if wrote:
                    typer.echo()
                raise CliError(f"the answer stopped: {event.get('code')}: {event.get('detail')}")
            elif kind == "done":
                final = event
    if wrote:
        typer.echo()
    if final is None:
        raise CliError("the answer stream ended without its final event")
    return final


def query(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(help="The question.", show_default=False)],
    mode: Annotated[Mode, typer.Option(help="Retrieval mode.")] = Mode.mix,
    stream: Annotated[bool, typer.Option("--stream", help="Print the answer as it is written.")] = False,
    context_only: Annotated[
        bool, typer.Option("--context-only", help="Print the retrieved context, no answer.")
    ] = False,
    top_k: Annotated[
        int | None, typer.Option(min=1, help="Entities / relations to retrieve.", show_default="40")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the service's JSON answer as is.")] = False,
) -> None:
    """Ask a question about the project's documents."""
    body: dict[str, Any] = {
        "project_id": service(ctx).project,
        "query": question,
        "mode": mode.value,
        "only_need_context": context_only,
    }
    if top_k is not None:
        body["top_k"] = top_k
    if as_json:
        typer.echo(json.dumps(service(ctx).json("POST", "/query", json=body), ensure_ascii=False, indent=2))
        return
    if stream:
        result = _streamed(ctx, body)
    else:
        result = service(ctx).json("POST", "/query", json=body)
        if result.get("response") is not None:
            typer.echo(result["response"])
    if context_only:
        _print_context(console(), result.get("context") or {})
    _print_references(result)
