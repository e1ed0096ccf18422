"""openapi.yaml describes exactly what the app serves (regenerate: `python -m app.web.openapi_export`), is a valid
OpenAPI document, and declares security, errors, headers, operation ids and examples for every operation."""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate
from pydantic import BaseModel

from app.schemas import deletion, documents, errors, graph, projects, query
from app.web.auth import ALWAYS_OPEN_PATHS
from app.web.openapi import ERROR_SCHEMA_REF, RESPONSE_HEADERS, SECURITY_SCHEMES
from app.web.openapi_export import TARGET, served_spec

METHODS = {"get", "post", "put", "patch", "delete"}
CAMEL_CASE = re.compile(r"^[a-z]+(?:[A-Z][a-z0-9]*)*$")
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser: the same result, 5x faster


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    return served_spec()


def _operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, op) for path, item in spec["paths"].items() for method, op in item.items() if method in METHODS
    ]


def test_openapi_yaml_matches_served_spec(spec):
    committed = yaml.load(TARGET.read_text(encoding="utf-8"), Loader=SAFE_LOADER)
    assert committed == spec, "openapi.yaml is stale: run `python -m app.web.openapi_export`"


async def test_served_openapi_endpoint_matches(client, spec):
    served = (await client.get("/openapi.json")).json()
    assert served == spec


def test_spec_is_valid_openapi(spec):
    validate(spec)  # raises on the first violation of the OpenAPI 3.1 schema


def test_operation_ids_are_readable_and_unique(spec):
    ids = [op["operationId"] for _, _, op in _operations(spec)]
    assert len(ids) == len(set(ids))
    assert all(CAMEL_CASE.match(i) for i in ids), ids
    assert {"createProject", "ingestTexts", "runQuery", "exportGraph"} <= set(ids)


def test_security_schemes_cover_every_route_but_the_open_ones(spec):
    schemes = spec["components"]["securitySchemes"]
    assert schemes == SECURITY_SCHEMES
    assert schemes["bearerAuth"]["scheme"] == "bearer"
    assert schemes["apiKeyHeader"] == {**schemes["apiKeyHeader"], "in": "header", "name": "X-API-Key"}
    assert spec["security"] == [{"bearerAuth": []}, {"apiKeyHeader": []}]
    for path, method, op in _operations(spec):
        if path in ALWAYS_OPEN_PATHS:
            assert op["security"] == [], (method, path)
            assert "401" not in op["responses"]
        else:
            assert "security" not in op, (method, path)  # the document-wide requirement applies
            assert "401" in op["responses"], (method, path)


def test_every_error_response_has_the_app_error_shape(spec):
    assert "HTTPValidationError" not in spec["components"]["schemas"]
    error_schema = spec["components"]["schemas"]["ErrorBody"]
    assert error_schema["required"] == ["detail", "code"]
    for path, method, op in _operations(spec):
        for status, response in op["responses"].items():
            if status[0] in "45" and path != "/health":
                assert response["content"] == {"application/json": {"schema": {"$ref": ERROR_SCHEMA_REF}}}, (
                    method,
                    path,
                    status,
                )


def test_errors_follow_what_each_route_can_raise(spec):
    for _, _, op in _operations(spec):
        if "requestBody" in op:
            assert {"413", "422"} <= set(op["responses"]), op["operationId"]
        if op.get("parameters"):
            assert "422" in op["responses"], op["operationId"]
    ops = {op["operationId"]: op["responses"] for _, _, op in _operations(spec)}
    assert "403" not in ops["listProjects"]  # lists only the key's projects: never refuses one
    assert "403" in ops["getProject"] and "403" in ops["createProject"]
    assert {"404", "409"} <= set(ops["deleteDocument"]) and {"404", "409"} <= set(ops["retryDocument"])
    assert {"409"} <= set(ops["createProject"]) and "404" not in ops["createProject"]
    assert {"404", "409"} <= set(ops["createEntity"]) and {"404", "409"} <= set(ops["updateEntity"])
    assert {"404", "499", "503"} <= set(ops["runQuery"]) and {"499"} <= set(ops["streamQuery"])
    assert "400" in ops["ingestFiles"]
    assert "Retry-After" in ops["exportGraph"]["503"]["headers"]
    assert set(ops["getMetrics"]) == {"200"}


def test_every_response_declares_the_request_headers(spec):
    assert spec["components"]["headers"] == RESPONSE_HEADERS
    for path, method, op in _operations(spec):
        for status, response in op["responses"].items():
            headers = response.get("headers", {})
            for name in ("X-Request-ID", "X-Token-Input", "X-Token-Output"):
                assert headers.get(name) == {"$ref": f"#/components/headers/{name}"}, (method, path, status)


def _request_models() -> dict[str, type[BaseModel]]:
    return {
        name: model
        for module in (deletion, documents, graph, errors, projects, query)
        for name, model in inspect.getmembers(module, inspect.isclass)
        if issubclass(model, BaseModel) and model.__module__ == module.__name__
    }


def test_every_request_body_has_a_valid_example(spec):
    models = _request_models()
    schemas = spec["components"]["schemas"]
    checked = 0
    for path, method, op in _operations(spec):
        if "requestBody" not in op:
            continue
        for media_type, content in op["requestBody"]["content"].items():
            schema = content["schema"]  # an optional body is anyOf [model, null]
            ref = schema.get("$ref") or next(s["$ref"] for s in schema["anyOf"] if "$ref" in s)
            name = ref.rsplit("/", 1)[1]
            examples = [content["example"]] if "example" in content else schemas[name].get("examples", [])
            assert examples, f"{method} {path} ({media_type}) has no example"
            validator = Draft202012Validator({"components": spec["components"], "$ref": ref})
            for example in examples:
                validator.validate(example)
                if name in models:  # the app's own validation (cross-field rules too) accepts it
                    models[name].model_validate(example)
                checked += 1
    assert checked >= 12


def test_error_examples_match_what_the_app_sends(spec):
    validator = Draft202012Validator({"components": spec["components"], "$ref": ERROR_SCHEMA_REF})
    for example in spec["components"]["schemas"]["ErrorBody"]["examples"]:
        validator.validate(example)


async def test_validation_errors_have_the_declared_shape(client, spec):
    response = await client.post("/query", json={"mode": "nope"})
    assert response.status_code == 422
    Draft202012Validator({"components": spec["components"], "$ref": ERROR_SCHEMA_REF}).validate(response.json())
    assert response.json()["code"] == "validation_error"
    assert {"x-request-id", "x-token-input", "x-token-output"} <= set(response.headers)
