"""Pure-ASGI middleware: request id, per-request token usage headers, HTTP metrics by route template and a
last-resort JSON 500 (no stack trace) around every request; the request-size limit inside authentication."""

from __future__ import annotations

import json
import logging
import time
import uuid

from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.core import metrics
from app.core.error_codes import ErrorCode
from app.core.logging_setup import project_var, request_id_var
from app.core.usage import Usage, track_usage
from app.web.json_values import JsonValueCounter

log = logging.getLogger(__name__)


class _BodyTooLarge(HTTPException):
    """An HTTPException so FastAPI's body parsing re-raises it (it turns other errors into a 400) and the
    app's handler renders it as 413; a route that reads the body itself lets it reach this middleware."""

    def __init__(self, detail: str) -> None:
        super().__init__(413, detail)


async def send_error(
    send: Send, status: int, detail: str, code: ErrorCode, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    """A JSON error answered by a middleware, in the app's {"detail", "code"} shape."""
    body = json.dumps({"detail": detail, "code": code}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class RequestContextMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        request_id = headers.get(b"x-request-id", b"").decode("latin-1")[:64] or uuid.uuid4().hex[:16]
        usage = Usage()
        started = time.perf_counter()
        state = {"status": 500, "started": False}

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                state["status"] = message["status"]
                state["started"] = True
                out = MutableHeaders(scope=message)
                out["X-Token-Input"] = str(usage.prompt_tokens)
                out["X-Token-Output"] = str(usage.completion_tokens)
                out["X-Request-ID"] = request_id
            await send(message)

        rid_token = request_id_var.set(request_id)
        project_token = project_var.set("-")  # the route names the project once its arguments are validated
        try:
            with track_usage(usage):
                await self.app(scope, receive, send_with_headers)
        except Exception:
            log.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
            if not state["started"]:
                await send_error(
                    send_with_headers, 500, f"Internal server error (request id {request_id})", "internal_error"
                )
        finally:
            request_id_var.reset(rid_token)
            project_var.reset(project_token)
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            method = scope.get("method", "GET")
            metrics.HTTP_REQUESTS.labels(method, template, str(state["status"])).inc()
            metrics.HTTP_LATENCY.labels(method, template).observe(time.perf_counter() - started)


class BodyLimitMiddleware:
    """413 for a body over the limit: at once from Content-Length, else as soon as the stream passes it; and
    for a body other than a multipart upload, as soon as it holds more than `max_json_values` JSON values
    (counted as it streams in, see app/web/json_values.py), before anything parses it.
    Installed inside authentication, so an unauthenticated request is refused before its body is read."""

    def __init__(self, app: ASGIApp, max_body_bytes: int, max_json_values: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.max_json_values = max_json_values

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_large = f"Request body is larger than the limit of {self.max_body_bytes} bytes"
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared and declared.isdigit() and int(declared) > self.max_body_bytes:
            await send_error(send, 413, too_large, "payload_too_large")
            return
        multipart = headers.get(b"content-type", b"").lower().startswith(b"multipart/")
        values = None if multipart else JsonValueCounter(self.max_json_values)
        received = 0
        started = False
        refusal = too_large

        async def limited_receive() -> Message:
            nonlocal received, refusal
            message = await receive()
            if message["type"] == "http.request":
                piece = message.get("body", b"")
                received += len(piece)
                if received > self.max_body_bytes:
                    raise _BodyTooLarge(too_large)
                if values is not None and not values.feed(piece):
                    refusal = (
                        f"Request body holds more than {self.max_json_values} JSON values (MAX_REQUEST_JSON_VALUES)"
                    )
                    raise _BodyTooLarge(refusal)
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _BodyTooLarge:
            if not started:
                await send_error(send, 413, refusal, "payload_too_large")
