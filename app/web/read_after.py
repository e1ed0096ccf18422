"""Read-your-writes across read replicas (DATABASE_READ_URL), per client.

Each request gets a `ReadSession` whose floor is the highest WAL position this process has seen its client's
requests observe (its API key: every project of the key; one shared client when API_KEYS is empty), or the
`X-Read-After-LSN` header the client echoes back, whichever is higher. Replica reads wait for that position
(app/db/replicas.py). A request that used the primary (a write, a document reported processed by the queue's
reader, a fallback read) asks the primary for its current position once, when the answer's headers go out
and again at its end; the answer carries what the request saw as `X-Read-After-LSN`, so a client talking to
several API processes (behind a load balancer) can send it back to any of them.
"""

from __future__ import annotations

import hashlib
import logging

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.db.engine import Database
from app.db.replicas import ReadSession, read_session
from app.domain.wal_positions import format_lsn, parse_lsn
from app.web.middleware import send_error

log = logging.getLogger(__name__)

READ_AFTER_HEADER = "x-read-after-lsn"


def _client_of(scope: Scope) -> str:
    principal = scope.get("state", {}).get("principal")
    key = getattr(principal, "key", None)
    return "" if key is None else hashlib.sha256(key.secret.encode()).hexdigest()[:32]


class ReadYourWritesMiddleware:
    """Pure ASGI, inside authentication (the client is its API key). Does nothing without read replicas."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.seen: dict[str, int] = {}  # client → highest position its requests observed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        container = getattr(getattr(scope.get("app"), "state", None), "container", None)
        db: Database | None = getattr(container, "db", None)
        if scope["type"] != "http" or db is None or db.replicas is None:
            await self.app(scope, receive, send)
            return
        client = _client_of(scope)
        echoed = Headers(scope=scope).get(READ_AFTER_HEADER)
        try:
            floor = parse_lsn(echoed) if echoed else 0
        except ValueError as exc:
            await send_error(send, 400, f"X-Read-After-LSN: {exc}", "bad_request")
            return
        session = ReadSession(floor=max(floor, self.seen.get(client, 0)))

        async def send_with_position(message: Message) -> None:
            if message["type"] == "http.response.start":
                position = await self._settle(db, session, client)
                if position:
                    MutableHeaders(scope=message)[READ_AFTER_HEADER] = format_lsn(position)
            await send(message)

        token = read_session.set(session)
        try:
            await self.app(scope, receive, send_with_position)
        finally:
            read_session.reset(token)
            await self._settle(db, session, client)  # what a streamed answer wrote after its headers

    async def _settle(self, db: Database, session: ReadSession, client: str) -> int:
        if session.used_primary:
            session.used_primary = False
            try:
                session.saw(await db.primary_position())
            except Exception as exc:  # the request's own outcome stands; its next read may only be older
                log.warning("read-your-writes: cannot read the primary's WAL position: %s", type(exc).__name__)
        if session.seen > self.seen.get(client, 0):
            self.seen[client] = session.seen
        return max(session.seen, session.floor)
