"""HTTP pieces the chat-protocol routers share: a route class that answers errors in the protocol's shape,
and streaming responses that stop (and close the answer behind them) when the client leaves."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.core.error_codes import ErrorCode
from app.core.errors import AppError
from app.web.auth import ProjectScopedRoute
from app.web.disconnects import EventStream

ErrorShape = Callable[[int, str | list[dict[str, Any]], str], dict[str, Any]]

_HTTP_CODES: dict[int, ErrorCode] = {
    400: "bad_request",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
}


def protocol_route(shape: ErrorShape) -> type[ProjectScopedRoute]:
    """A project-scoped route class whose errors (the app's, validation, HTTP) are rendered by `shape`: the
    protocol's own error object, which keeps the service's `detail` and `code` next to it."""

    class ProtocolRoute(ProjectScopedRoute):
        def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
            handler = super().get_route_handler()

            async def handle(request: Request) -> Response:
                try:
                    return await handler(request)
                except AppError as exc:
                    return JSONResponse(shape(exc.status_code, exc.detail, exc.code), status_code=exc.status_code)
                except RequestValidationError as exc:
                    # the body is validated once per parameter that declares it (the route and its project
                    # dependency): the same error comes twice, and is told once
                    fields = {
                        (tuple(e.get("loc", ())), e.get("msg", "")): {
                            "loc": list(e.get("loc", ())),
                            "msg": e.get("msg", ""),
                            "type": e.get("type", ""),
                        }
                        for e in exc.errors()
                    }
                    return JSONResponse(shape(422, list(fields.values()), "validation_error"), status_code=422)
                except StarletteHTTPException as exc:
                    code = _HTTP_CODES.get(exc.status_code, "http_error")
                    return JSONResponse(
                        shape(exc.status_code, str(exc.detail), code),
                        status_code=exc.status_code,
                        headers=getattr(exc, "headers", None),
                    )

            return handle

    return ProtocolRoute


def ndjson_stream(lines: AsyncGenerator[str, None], send_timeout: float) -> EventStream:
    stream = EventStream(lines, send_timeout)
    stream.headers["content-type"] = "application/x-ndjson"
    return stream


def sse_stream(events: AsyncGenerator[str, None], send_timeout: float) -> EventStream:
    return EventStream(events, send_timeout)
