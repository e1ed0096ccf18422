"""`check-llm`: is the configured model good enough? Runs the model check (app/services/model_check/check.py) in this
process with the settings of the environment and `.env` (no database, no running service needed), or with
`--remote` asks the running service (GET /health/llm?deep=true). Exit code 1 when the verdict is
"not recommended"."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import typer

from app.cli.client import service
from app.cli.errors import EXIT_FAILED, CliError
from app.cli.output import add_row, console, table


async def _run_here() -> dict[str, Any]:
    from app.core.config import settings_or_exit
    from app.core.errors import AppError
    from app.providers.embeddings import EmbeddingClient
    from app.providers.llm import LLMClient
    from app.providers.tokenizer import Tokenizer
    from app.services.model_check.check import ModelCheck

    settings = settings_or_exit()
    tokenizer = Tokenizer(settings.tokenizer_encoding)
    llm, embedder = LLMClient(settings, tokenizer), EmbeddingClient(settings, tokenizer)
    try:
        return (await ModelCheck(llm, embedder, settings).run()).as_dict()
    except AppError as exc:
        raise CliError(exc.detail) from None
    finally:
        await llm.close()
        await embedder.close()


def print_report(report: dict[str, Any]) -> None:
    out = console()
    calls = table(
        "call",
        "ok",
        "latency ms",
        "prompt tokens",
        "completion tokens",
        "note",
        title=f"Model check: {report['model']} / {report['embedding_model']}",
    )
    for call in report["calls"]:
        note = call["error"] or (f"ran away ({call['runaway']})" if call["runaway"] else "")
        add_row(
            calls,
            call["call"],
            "yes" if call["ok"] else "NO",
            call["latency_ms"],
            call["prompt_tokens"],
            call["completion_tokens"],
            note,
        )
    out.print(calls)
    grid = table()
    add_row(grid, "extraction format", report["extraction_format"])
    add_row(grid, "records parsed / unparseable", f"{report['records_parsed']} / {report['records_unparseable']}")
    add_row(grid, "known facts found", f"{report['facts_found']} of {report['facts_total']}")
    add_row(grid, "entities", ", ".join(report["entities"]) or "none")
    add_row(grid, "keyword JSON", report["keywords_json"])
    add_row(grid, "summary", "ok" if report["summary_ok"] else "not usable")
    expected = report["embedding_dim_expected"]
    add_row(grid, "embedding dimension", f"{report['embedding_dim']} (EMBEDDING_DIM {expected})")
    add_row(grid, "verdict", report["verdict"].upper())
    for reason in report["reasons"]:
        add_row(grid, "", reason)
    out.print(grid)


def check_llm(
    ctx: typer.Context,
    remote: Annotated[
        bool,
        typer.Option(
            "--remote",
            help="Ask the running service (--url) to run the check with its settings, instead of this process.",
        ),
    ] = False,
) -> None:
    """Check the configured LLM and embedding model on a built-in text: latency, tokens, records, facts found,
    keyword JSON, embedding dimension, and a verdict (good / usable / not recommended)."""
    if remote:
        report = service(ctx).json("GET", "/health/llm", params={"deep": "true"})["check"]
    else:
        report = asyncio.run(_run_here())
    print_report(report)
    if report["verdict"] == "not recommended":
        raise typer.Exit(EXIT_FAILED)
