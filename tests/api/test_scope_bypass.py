"""A project-scoped key acts on its projects only, whatever the request's media type spelling: the scope is
checked against the project the route acts on (its validated arguments), not a re-parse of the raw body.
Authentication runs before any body is read."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select

from app.db.tables import documents, entities, relations
from app.main import api_routes
from app.web.auth import ProjectScopedRoute

ADMIN, SCOPED = "admin-key", "alpha-key"
H_ADMIN, H_A = {"X-API-Key": ADMIN}, {"X-API-Key": SCOPED}
BETA_TEXT = "Quorra Vellis founded Tessaline Works in Oslo."
# Every spelling FastAPI parses as JSON or as a form.
JSON_TYPES = [
    "application/json",
    "Application/JSON",
    "APPLICATION/JSON; charset=utf-8",
    "application/vnd.x+json",
    "application/problem+json",
]
FORM_TYPES = ["multipart/form-data", "Multipart/Form-Data", "MULTIPART/FORM-DATA"]


@pytest.fixture
async def app(make_settings, start_app):
    app = await start_app(make_settings(api_keys=[ADMIN, f"{SCOPED}:alpha"]))
    for project in ("alpha", "beta"):
        assert (await app.http.post("/projects", json={"id": project}, headers=H_ADMIN)).status_code == 201
    body = {"project_id": "beta", "documents": [{"text": BETA_TEXT}], "wait": True}
    ingested = await app.http.post("/documents", json=body, headers=H_ADMIN)
    assert ingested.json()["documents"][0]["status"] == "processed"
    return app


async def _beta_counts(app) -> tuple[int, int, int]:
    async with app.container.db.connect() as conn:
        return tuple(
            [
                int(await conn.scalar(select(func.count()).select_from(t).where(t.c.project_id == "beta")))
                for t in (documents, entities, relations)
            ]
        )


def _json_requests() -> list[tuple[str, str, dict]]:
    """(method, path, body naming beta) for every route family that takes its project from a JSON body."""
    return [
        ("POST", "/documents", {"project_id": "beta", "documents": [{"text": "Intruder text about Mallory."}]}),
        ("POST", "/documents/doc-x/retry", {"project_id": "beta"}),
        (
            "POST",
            "/query",
            {"project_id": "beta", "query": "Who founded Tessaline Works?", "mode": "naive", "only_need_context": True},
        ),
        ("POST", "/query/stream", {"project_id": "beta", "query": "Who founded Tessaline Works?"}),
        ("POST", "/entities", {"project_id": "beta", "name": "Mallory", "description": "Planted."}),
        ("PATCH", "/entities/Quorra%20Vellis", {"project_id": "beta", "description": "Overwritten."}),
        (
            "POST",
            "/entities/merge",
            {"project_id": "beta", "source_entities": ["Quorra Vellis"], "target_entity": "Tessaline Works"},
        ),
        (
            "POST",
            "/relations",
            {"project_id": "beta", "source": "Quorra Vellis", "target": "Oslo", "description": "Planted."},
        ),
        (
            "PATCH",
            "/relations",
            {
                "project_id": "beta",
                "source": "Quorra Vellis",
                "target": "Tessaline Works",
                "description": "Overwritten.",
            },
        ),
        ("POST", "/projects", {"id": "beta-two"}),
    ]


@pytest.mark.parametrize("content_type", JSON_TYPES)
async def test_body_naming_another_project_is_forbidden_in_every_json_spelling(app, content_type):
    before = await _beta_counts(app)
    for method, path, body in _json_requests():
        response = await app.http.request(
            method, f"{path}?project_id=alpha", content=json.dumps(body), headers={**H_A, "Content-Type": content_type}
        )
        assert response.status_code == 403, (content_type, method, path, response.status_code, response.text[:200])
        assert response.json()["code"] == "project_forbidden"
        assert "Tessaline" not in response.text
    assert await _beta_counts(app) == before
    beta_entity = await app.http.get("/entities/Quorra%20Vellis?project_id=beta", headers=H_ADMIN)
    assert "Overwritten" not in beta_entity.text and "Tessaline" in beta_entity.text


@pytest.mark.parametrize("content_type", FORM_TYPES)
async def test_upload_form_naming_another_project_is_forbidden(app, content_type):
    before = await _beta_counts(app)
    boundary = "----scopeprobe"
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="project_id"\r\n\r\nbeta\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="x.txt"\r\n'
        f"Content-Type: text/plain\r\n\r\nMallory planted this.\r\n--{boundary}--\r\n"
    ).encode()
    response = await app.http.post(
        "/documents/upload?project_id=alpha",
        content=body,
        headers={**H_A, "Content-Type": f"{content_type}; boundary={boundary}"},
    )
    assert response.status_code == 403, (content_type, response.text)
    assert await _beta_counts(app) == before


async def test_scoped_key_still_works_on_its_own_project_in_any_spelling(app):
    body = {"project_id": "alpha", "query": "Who founded Tessaline Works?", "mode": "naive", "only_need_context": True}
    for content_type in JSON_TYPES:
        response = await app.http.post(
            "/query?project_id=alpha", content=json.dumps(body), headers={**H_A, "Content-Type": content_type}
        )
        assert response.status_code == 200, (content_type, response.text)
        assert "Tessaline" not in response.text  # the route acted on alpha, the project it was checked for
        # a query string naming another project than the body's is not silently ignored (web/project_param.py)
        other = await app.http.post(
            "/query?project_id=beta", content=json.dumps(body), headers={**H_A, "Content-Type": content_type}
        )
        assert other.status_code == 422 and other.json()["code"] == "validation_error", other.text
        assert "Tessaline" not in other.text


async def test_path_and_query_projects_are_checked(app):
    assert (await app.http.get("/documents?project_id=beta", headers=H_A)).status_code == 403
    assert (await app.http.get("/projects/beta", headers=H_A)).status_code == 403
    assert (await app.http.get("/export?project_id=beta&format=json", headers=H_A)).status_code == 403
    assert (await app.http.get("/documents", headers=H_A)).status_code == 403  # omitted means default
    assert (await app.http.get("/documents?project_id=alpha", headers=H_A)).status_code == 200


async def test_every_api_route_checks_the_scope(app):
    routes = api_routes(app.app.routes)
    assert len(routes) > 20 and all(isinstance(r, ProjectScopedRoute) for r in routes)
    assert {"/documents", "/query", "/entities/merge", "/export"} <= {r.path for r in routes}


async def test_key_is_checked_before_the_body_is_read(make_settings, start_app):
    app = await start_app(make_settings(api_keys=[ADMIN], max_request_bytes=4096))
    oversized = await app.http.post(
        "/documents/upload", content=b"x" * 10_000, headers={"Content-Type": "multipart/form-data; boundary=b"}
    )
    assert oversized.status_code == 401
    assert oversized.headers["www-authenticate"] == "Bearer"
    authorised = await app.http.post(
        "/documents/upload",
        content=b"x" * 10_000,
        headers={**H_ADMIN, "Content-Type": "multipart/form-data; boundary=b"},
    )
    assert authorised.status_code == 413


async def test_deeply_nested_json_is_a_client_error_everywhere(make_settings, start_app):
    app = await start_app(make_settings(api_keys=[ADMIN]))
    nested = b"[" * 100_000 + b"]" * 100_000
    for method, path in (
        ("DELETE", "/documents/doc-x"),
        ("DELETE", "/entities/x"),
        ("DELETE", "/relations"),
        ("DELETE", "/projects/beta"),
        ("POST", "/documents"),
        ("POST", "/query"),
        ("PATCH", "/entities/x"),
        ("POST", "/entities/merge"),
    ):
        unauthenticated = await app.http.request(
            method, path, content=nested, headers={"Content-Type": "application/json"}
        )
        assert unauthenticated.status_code == 401, (method, path)
        response = await app.http.request(
            method, path, content=nested, headers={**H_ADMIN, "Content-Type": "application/json"}
        )
        assert 400 <= response.status_code < 500, (method, path, response.status_code)


async def test_api_description_needs_a_key_unless_public(make_settings, start_app):
    """The /docs and /redoc pages are open (they ask for a key: tests/api/test_api_docs.py); what they show is not."""
    closed = await start_app(make_settings(api_keys=[ADMIN]))
    assert (await closed.http.get("/openapi.json")).status_code == 401
    assert (await closed.http.get("/openapi.json", headers=H_ADMIN)).status_code == 200
    public = await start_app(make_settings(api_keys=[ADMIN], public_docs=True))
    assert (await public.http.get("/openapi.json")).status_code == 200
    assert (await public.http.get("/documents")).status_code == 401


async def test_scoped_key_sees_only_its_projects_queue(make_settings, start_app):
    app = await start_app(make_settings(api_keys=[ADMIN, f"{SCOPED}:alpha"], worker_enabled=False))
    for project in ("alpha", "beta"):
        await app.http.post("/projects", json={"id": project}, headers=H_ADMIN)
    await app.http.post(
        "/documents",
        headers=H_ADMIN,
        json={"project_id": "beta", "documents": [{"text": f"Queued text {i}."} for i in range(3)]},
    )
    admin_view = (await app.http.get("/pipeline?project_id=alpha", headers=H_ADMIN)).json()
    scoped_view = (await app.http.get("/pipeline?project_id=alpha", headers=H_A)).json()
    assert admin_view["global_queue_depth"] == 3  # beta's queue is visible to the admin key
    assert scoped_view["global_queue_depth"] == 0
    assert scoped_view["local_worker"] is None
