"""The one JSON error shape every failure is answered with (app/web/error_handlers.py, app/web/middleware.py)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from app.core.error_codes import ErrorCode


class FieldError(BaseModel):
    """One invalid field of a request that failed validation."""

    loc: list[str | int] = Field(description="Where the error is: `body`, `query`, `path` or `header`, then the field")
    msg: str
    type: str = Field(description="The kind of error, e.g. `missing`, `string_too_long`")


class ErrorBody(BaseModel):
    """A message (or, for request validation, the list of field errors) and a machine-readable code."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"detail": "Project 'acme' not found", "code": "project_not_found"},
                {
                    "detail": [{"loc": ["body", "query"], "msg": "Field required", "type": "missing"}],
                    "code": "validation_error",
                },
            ]
        }
    )

    detail: str | list[FieldError]
    code: ErrorCode = Field(description="Stable error code, e.g. `project_not_found`, `validation_error`")
