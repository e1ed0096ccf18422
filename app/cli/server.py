"""`serve` and `worker`: what `make run` (`python -m app`) and `make worker` (`python -m app.worker`) run, in
this process, with settings from the environment and `.env` like those."""

from __future__ import annotations

import asyncio
import os
from typing import Annotated

import typer


def _override(variable: str, value: object | None) -> None:
    if value is not None:  # an option given on the command line wins over the environment and .env
        os.environ[variable] = str(value)


def serve(
    host: Annotated[
        str | None,
        typer.Option(
            help="Interface to bind (default: HOST, else 127.0.0.1 while no API_KEYS are set).", show_default=False
        ),
    ] = None,
    port: Annotated[
        int | None, typer.Option(min=1, max=65535, help="Port (default: PORT, else 9621).", show_default=False)
    ] = None,
    workers: Annotated[
        int | None, typer.Option(min=1, help="Server processes (default: WORKERS, else 1).", show_default=False)
    ] = None,
) -> None:
    """Serve the API (with its in-process pipeline worker), as `make run` does."""
    from app.__main__ import main as serve_main

    _override("HOST", host)
    _override("PORT", port)
    _override("WORKERS", workers)
    serve_main()


def worker() -> None:
    """Run a standalone pipeline worker against the configured database, as `make worker` does."""
    from app.worker.queue import _main as worker_main  # what `python -m app.worker` runs

    asyncio.run(worker_main())
