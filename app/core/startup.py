"""Start-up refusals: what stops the service from starting, told as one line that says what to do.

`python -m app.worker` prints the line; under uvicorn (`python -m app`), `OneLineStartupRefusal` hands it to the
server as the start-up failure's message in place of the traceback Starlette would send.
"""

from __future__ import annotations

from sqlalchemy.engine import make_url
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.core.config import Settings


class StartupRefused(RuntimeError):
    """Its message is one line: the problem, and the setting or step that fixes it."""


def database_location(settings: Settings) -> str:
    """Where the database is, with no password: the embedded one's DATA_DIR, or DATABASE_URL's server."""
    if not settings.database_url:
        return f"the embedded database in DATA_DIR={settings.data_dir}"
    try:
        url = make_url(settings.database_url)
    except Exception:
        return "the database at DATABASE_URL"
    server = f"{url.host or 'localhost'}:{url.port or 5432}" if url.host or url.port else "its default socket"
    return f"the database {url.database or '(default)'} at DATABASE_URL ({server})"


def dimension_mismatch(settings: Settings, stored: int) -> StartupRefused:
    new_database = (
        "set DATA_DIR to a new, empty folder"
        if not settings.database_url
        else "set DATABASE_URL to a new, empty database"
    )
    return StartupRefused(
        f"EMBEDDING_DIM is {settings.embedding_dim} but {database_location(settings)} holds {stored}-dimensional "
        f"vectors (the size is fixed once vectors are stored): set EMBEDDING_DIM={stored} to use it, or "
        f"{new_database} and ingest the documents again"
    )


def unreachable_database(settings: Settings, exc: BaseException) -> StartupRefused:
    fix = (
        "check DATABASE_URL (host, port, user, password, database) and that the server is running"
        if settings.database_url
        else "check that DATA_DIR is a writable folder of this machine"
    )
    return StartupRefused(
        f"cannot connect to {database_location(settings)} ({type(exc).__name__}: {_first_line(exc)}): {fix}"
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else "no detail"


class OneLineStartupRefusal:
    """Pure ASGI, outermost: a StartupRefused raised by the lifespan reaches the server as its one-line message.
    Starlette reports any start-up exception with its formatted traceback; that message is held back until the
    exception shows whether it was a refusal. Every other scope passes straight through."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return
        held: list[Message] = []

        async def hold_startup_failure(message: Message) -> None:
            if message["type"] == "lifespan.startup.failed":
                held.append(message)
            else:
                await send(message)

        try:
            await self.app(scope, receive, hold_startup_failure)
        except StartupRefused as exc:
            await send({"type": "lifespan.startup.failed", "message": str(exc)})
            return
        except BaseException:
            for message in held:
                await send(message)
            raise
        for message in held:
            await send(message)
