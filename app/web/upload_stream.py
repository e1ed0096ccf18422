"""Upload size enforced while the multipart body streams in, before any file is parsed.

Starlette stores each uploaded file whole (memory, then a temporary file) before the route runs; the route
could only measure it afterwards. Here a file part stops being stored once it passes MAX_UPLOAD_BYTES: the
rest of its bytes are dropped as they arrive, and the file keeps MAX_UPLOAD_BYTES + 1 bytes, which the upload
route reports as too large (`rejected`, the other files of the request still taken). The whole body stays
bounded by MAX_REQUEST_BYTES (BodyLimitMiddleware)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from contextlib import aclosing
from typing import Any

from fastapi import HTTPException, Request, Response
from starlette.datastructures import FormData
from starlette.formparsers import MultiPartException, MultiPartParser, parse_options_header

from app.web.auth import ProjectScopedRoute


class LimitedMultiPartParser(MultiPartParser):
    def __init__(self, *args: Any, max_file_bytes: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_file_bytes = max_file_bytes
        self._part_bytes = 0

    def on_part_begin(self) -> None:
        super().on_part_begin()
        self._part_bytes = 0

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        if self._current_part.file is None:  # a form field: Starlette's own part limit applies
            super().on_part_data(data, start, end)
            return
        room = self.max_file_bytes + 1 - self._part_bytes
        if room <= 0:
            return
        take = min(room, end - start)
        self._part_bytes += take
        super().on_part_data(data, start, start + take)


class _UploadRequest(Request):
    max_file_bytes: int = 0

    async def _get_form(
        self, *, max_files: int | float = 1000, max_fields: int | float = 1000, max_part_size: int = 1024 * 1024
    ) -> FormData:
        content_type, _ = parse_options_header(self.headers.get("Content-Type"))
        if self._form is None and content_type == b"multipart/form-data":
            try:
                async with aclosing(self.stream()) as stream:
                    parser = LimitedMultiPartParser(
                        self.headers,
                        stream,
                        max_files=max_files,
                        max_fields=max_fields,
                        max_part_size=max_part_size,
                        max_file_bytes=self.max_file_bytes,
                    )
                    self._form = await parser.parse()
            except MultiPartException as exc:
                raise HTTPException(status_code=400, detail=exc.message) from exc
        return await super()._get_form(max_files=max_files, max_fields=max_fields, max_part_size=max_part_size)


class UploadRoute(ProjectScopedRoute):
    """A project-scoped route whose multipart files are cut at the container's MAX_UPLOAD_BYTES as they stream."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def limited(request: Request) -> Response:
            upload = _UploadRequest(request.scope, request.receive, request._send)
            upload.max_file_bytes = request.app.state.container.settings.max_upload_bytes
            return await handler(upload)

        return limited
