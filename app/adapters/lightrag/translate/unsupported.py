"""The error of a LightRAG Server feature this service does not implement."""

from __future__ import annotations

from app.core.error_codes import ErrorCode
from app.core.errors import AppError


class NotSupported(AppError):
    """501: a request this service cannot honour is refused, never answered in a silently different way."""

    status_code = 501
    code: ErrorCode = "not_supported"
