"""File downloads that cannot starve the server.

Downloads are capped per process (EXPORT_MAX_CONCURRENT; more answer 503 with Retry-After) and a client that
accepts no bytes for EXPORT_SEND_TIMEOUT seconds is dropped. The body reads its rows batch by batch on briefly
borrowed connections, so even a stalled download never holds a pooled database connection.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator

from fastapi import Request
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.types import Receive, Scope, Send

from app.services.export import ExportDownload
from app.services.export.gate import ExportGate
from app.web.disconnects import SendTimedOut, bounded_send

log = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
# A batch can be megabytes (vectors): sent in slices, the send timeout measures a client's progress (it must
# take one slice per timeout), not the time a slow but steady reader needs for a whole batch.
SEND_SLICE = 64 * 1024


async def _sliced(body: AsyncGenerator[bytes, None]) -> AsyncGenerator[bytes, None]:
    async for data in body:
        for start in range(0, len(data), SEND_SLICE):
            yield data[start : start + SEND_SLICE]


class ExportResponse(StreamingResponse):
    """A download holding one gate slot until it ends, however it ends. A client that does not take a slice of
    the body within `send_timeout` seconds is dropped: the app gives up the response, the server closes the
    connection."""

    def __init__(self, download: ExportDownload, gate: ExportGate, send_timeout: float) -> None:
        super().__init__(
            _sliced(download.body),
            media_type=download.media_type,
            headers={
                "Content-Disposition": f'attachment; filename="{download.filename}"',
                "Cache-Control": "no-store",
                "X-Content-Type-Options": "nosniff",
            },
        )
        self._body = download.body
        self._gate = gate
        self._send_timeout = send_timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, bounded_send(send, self._send_timeout))
        except SendTimedOut:
            log.warning("export dropped: the client accepted no bytes for %s s", self._send_timeout)
        finally:
            try:
                await self._body.aclose()  # a body abandoned mid-way still cleans up now (xlsx temp files)
            finally:
                self._gate.leave()


def export_gate(request: Request, limit: int) -> ExportGate:
    """The process's gate, made on first use (one app per process)."""
    gate = getattr(request.app.state, "export_gate", None)
    if gate is None:
        gate = request.app.state.export_gate = ExportGate(limit)
    return gate


def busy(limit: int) -> JSONResponse:
    return JSONResponse(
        {
            "detail": f"{limit} exports are already running on this server; retry after {RETRY_AFTER_SECONDS} s.",
            "code": "export_busy",
        },
        status_code=503,
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
    )
