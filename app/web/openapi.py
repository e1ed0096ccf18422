"""The OpenAPI document: one error shape, the API-key security schemes, the headers of every response and
readable operation ids.

Routers declare the errors their services can raise with `errors(...)` (router-wide defaults plus per-route
additions). What a route answers because of the layers in front of it is derived from the route itself when
the document is built:
- 401 and the security requirement on every path but the open ones (ApiKeyMiddleware);
- 403 on routes that check the key's project scope (ProjectScopedRoute);
- 413 on routes with a request body (BodyLimitMiddleware);
- 422 on routes with any input, in the {detail, code} shape the validation handler really sends.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from fastapi import FastAPI
from fastapi.routing import APIRoute

from app.schemas.errors import ErrorBody
from app.web.auth import ALWAYS_OPEN_PATHS

ERROR_SCHEMA_REF = f"#/components/schemas/{ErrorBody.__name__}"

ERROR_DESCRIPTIONS: dict[int, str] = {
    400: "The body could not be parsed (`bad_request`)",
    401: "API_KEYS is set and the key is missing or wrong (`missing_api_key`, `invalid_api_key`)",
    403: "The API key is scoped to other projects (`project_forbidden`)",
    404: "Unknown project (`project_not_found`)",
    409: "The request conflicts with the current state (`conflict`)",
    413: "The request body is larger than MAX_REQUEST_BYTES (`payload_too_large`)",
    422: "Invalid input: `detail` lists the invalid fields (`validation_error`) or says what is wrong",
    499: "The client disconnected before the answer was ready (`client_disconnected`; logged, never read)",
    503: "The database is unavailable (`database_unavailable`); retry shortly",
}

# Extra descriptions shared by several routes.
MODELS_UNAVAILABLE = (
    503,
    "The database, the LLM or the embedding provider is unavailable or not configured "
    "(`database_unavailable`, `llm_not_configured`, `embedding_not_configured`, "
    "`provider_error`)",
)

SECURITY_SCHEMES: dict[str, dict[str, Any]] = {
    "bearerAuth": {
        "type": "http",
        "scheme": "bearer",
        "description": "A key of API_KEYS as `Authorization: Bearer <key>`",
    },
    "apiKeyHeader": {
        "type": "apiKey",
        "in": "header",
        "name": "X-API-Key",
        "description": "A key of API_KEYS as `X-API-Key: <key>`",
    },
}
# Either scheme is enough. Without API_KEYS the service ignores keys.
SECURITY: list[dict[str, list[str]]] = [{name: []} for name in SECURITY_SCHEMES]

RESPONSE_HEADERS: dict[str, dict[str, Any]] = {
    "X-Request-ID": {
        "description": "The request's id: the caller's `X-Request-ID` (first 64 characters) or a "
        "generated one; logs of the request carry it",
        "schema": {"type": "string"},
    },
    "X-Token-Input": {"description": "LLM prompt tokens this request spent", "schema": {"type": "integer"}},
    "X-Token-Output": {"description": "LLM completion tokens this request spent", "schema": {"type": "integer"}},
    "X-Read-After-LSN": {
        "description": "With read replicas (DATABASE_READ_URL): the database position this request saw; send it "
        "back as `X-Read-After-LSN` so the next read, on any API process, sees at least as much",
        "schema": {"type": "string", "example": "0/16B3748"},
    },
}

HEALTH_REPORT_CONTENT: dict[str, Any] = {
    "application/json": {
        "schema": {
            "type": "object",
            "required": ["status"],
            "properties": {
                "status": {"type": "string", "enum": ["ok", "unavailable"]},
                "database": {"type": "string", "enum": ["ok", "unreachable"]},
                "migrations": {"type": "object"},
                "llm": {"type": "object"},
                "embedding": {"type": "object"},
                "read_replicas": {
                    "type": "array",
                    "description": "With DATABASE_READ_URL: each replica's state; one down leaves the service "
                    "ready (its reads go to the primary)",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "status": {"type": "string", "enum": ["ok", "down", "lagging", "not_a_standby"]},
                            "lag_ms": {"type": ["number", "null"]},
                            "error": {"type": ["string", "null"]},
                        },
                    },
                },
            },
        }
    }
}

ErrorSpec = int | tuple[int, str]


def errors(*declared: ErrorSpec) -> dict[int | str, dict[str, Any]]:
    """`responses=` for FastAPI in the {detail, code} shape: each item is a status with its usual description,
    or (status, description)."""
    responses: dict[int | str, dict[str, Any]] = {}
    for item in declared:
        status, description = item if isinstance(item, tuple) else (item, ERROR_DESCRIPTIONS[item])
        responses[status] = {"model": ErrorBody, "description": description}
    return responses


def operation_id(route: APIRoute) -> str:
    """The route's function name (or `name=`) in camelCase: `create_project` → `createProject`."""
    head, *rest = route.name.split("_")
    return head + "".join(word.capitalize() for word in rest)


def describe_api(app: FastAPI, routes: Iterable[APIRoute]) -> None:
    """Complete the app's OpenAPI document with what every route shares; call once the routers are included."""
    routes = [r for r in routes if r.include_in_schema]
    ids = [r.operation_id or operation_id(r) for r in routes]  # what FastAPI writes as operationId
    duplicated = [op for op, n in Counter(ids).items() if n > 1]
    if duplicated:
        raise RuntimeError(f"operation ids used by more than one route: {duplicated}")
    by_operation = dict(zip(ids, routes, strict=True))
    build: Callable[[], dict[str, Any]] = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = _complete(build(), by_operation)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def _complete(spec: dict[str, Any], routes: dict[str, APIRoute]) -> dict[str, Any]:
    components = spec.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    _add_error_schema(schemas)
    components["securitySchemes"] = copy.deepcopy(SECURITY_SCHEMES)
    components["headers"] = copy.deepcopy(RESPONSE_HEADERS)
    spec["security"] = copy.deepcopy(SECURITY)
    for path_item in spec.get("paths", {}).values():
        for operation in path_item.values():
            _complete_operation(operation, routes[operation["operationId"]])
    if not _uses(spec["paths"], "#/components/schemas/HTTPValidationError"):
        schemas.pop("HTTPValidationError", None)
        schemas.pop("ValidationError", None)
    return spec


def _add_error_schema(schemas: dict[str, Any]) -> None:
    generated = ErrorBody.model_json_schema(ref_template="#/components/schemas/{model}")
    for name, definition in generated.pop("$defs", {}).items():
        schemas.setdefault(name, definition)
    schemas.setdefault(ErrorBody.__name__, generated)


def _complete_operation(operation: dict[str, Any], route: APIRoute) -> None:
    responses: dict[str, Any] = operation["responses"]
    if route.path in ALWAYS_OPEN_PATHS:
        operation["security"] = []
    else:
        _declare(
            responses, 401, headers={"WWW-Authenticate": {"description": "`Bearer`", "schema": {"type": "string"}}}
        )
    if getattr(route.endpoint, "__scope_checked__", False):
        _declare(responses, 403)
    if "requestBody" in operation:
        _declare(responses, 413)
    if "requestBody" in operation or operation.get("parameters"):
        _declare(responses, 422)
    for status, response in responses.items():
        if status.startswith(("4", "5")) and "content" not in response:
            response["content"] = {"application/json": {"schema": {"$ref": ERROR_SCHEMA_REF}}}
        headers = response.setdefault("headers", {})
        for name in RESPONSE_HEADERS:
            headers[name] = {"$ref": f"#/components/headers/{name}"}
    operation["responses"] = dict(sorted(responses.items()))


def _declare(responses: dict[str, Any], status: int, headers: dict[str, Any] | None = None) -> None:
    """Add an error response; a route's own description of it is kept, its schema made the error shape."""
    response = responses.setdefault(str(status), {"description": ERROR_DESCRIPTIONS[status]})
    if response.get("description") == "Validation Error":  # FastAPI's default 422
        response["description"] = ERROR_DESCRIPTIONS[status]
    response["content"] = {"application/json": {"schema": {"$ref": ERROR_SCHEMA_REF}}}
    if headers:
        response.setdefault("headers", {}).update(headers)


def _uses(node: Any, ref: str) -> bool:
    if isinstance(node, dict):
        return node.get("$ref") == ref or any(_uses(v, ref) for v in node.values())
    if isinstance(node, list):
        return any(_uses(v, ref) for v in node)
    return False
