"""One JSON error shape for every failure: {"detail": ..., "code": ...}."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.core.error_codes import ErrorCode
from app.core.errors import AppError
from app.db.errors import is_connection_error

log = logging.getLogger(__name__)

_HTTP_CODES: dict[int, ErrorCode] = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    422: "invalid_input",
    503: "service_unavailable",
}


def _jsonable_errors(exc: RequestValidationError) -> list[dict]:
    errors = []
    for err in exc.errors():
        item = {"loc": list(err.get("loc", ())), "msg": err.get("msg", ""), "type": err.get("type", "")}
        errors.append(item)
    return errors


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(AppError)
    async def _app_error(_: Request, exc: AppError) -> JSONResponse:
        return JSONResponse({"detail": exc.detail, "code": exc.code}, status_code=exc.status_code)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": _jsonable_errors(exc), "code": "validation_error"}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        return JSONResponse(
            {"detail": exc.detail, "code": code}, status_code=exc.status_code, headers=getattr(exc, "headers", None)
        )

    @app.exception_handler(DBAPIError)
    async def _db(_: Request, exc: DBAPIError) -> JSONResponse:
        if is_connection_error(exc):
            log.warning("database unavailable: %s", type(exc.orig).__name__ if exc.orig else exc)
            return JSONResponse(
                {"detail": "The database is unavailable; retry shortly.", "code": "database_unavailable"},
                status_code=503,
            )
        raise exc

    @app.exception_handler(OSError)
    async def _os(_: Request, exc: OSError) -> JSONResponse:
        if is_connection_error(exc):
            log.warning("dependency connection failed: %s", type(exc).__name__)
            return JSONResponse(
                {"detail": "A dependency is unavailable; retry shortly.", "code": "service_unavailable"},
                status_code=503,
            )
        raise exc
