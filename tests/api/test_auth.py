"""API keys: required when configured, constant-time checked, scoped to projects."""

from __future__ import annotations

import pytest

ADMIN = "admin-secret"
SCOPED = "team-secret"


@pytest.fixture
async def secured(start_app, make_settings):
    app = await start_app(make_settings(api_keys=[ADMIN, f"{SCOPED}:team|default"]))
    await app.http.post("/projects", json={"id": "team"}, headers={"X-API-Key": ADMIN})
    await app.http.post("/projects", json={"id": "other"}, headers={"X-API-Key": ADMIN})
    return app.http


async def test_missing_and_invalid_keys_are_401(secured):
    missing = await secured.get("/projects")
    assert missing.status_code == 401
    assert missing.json()["code"] == "missing_api_key"
    wrong = await secured.get("/projects", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    assert wrong.json()["code"] == "invalid_api_key"


async def test_health_and_metrics_stay_open(secured):
    assert (await secured.get("/health")).status_code == 200
    assert (await secured.get("/metrics")).status_code == 200


async def test_bearer_and_header_both_accepted(secured):
    assert (await secured.get("/projects", headers={"Authorization": f"Bearer {ADMIN}"})).status_code == 200
    assert (await secured.get("/projects", headers={"X-API-Key": ADMIN})).status_code == 200


async def test_scoped_key_sees_and_touches_only_its_projects(secured):
    headers = {"X-API-Key": SCOPED}
    listed = (await secured.get("/projects", headers=headers)).json()["projects"]
    assert sorted(p["id"] for p in listed) == ["default", "team"]
    assert (await secured.get("/projects/team", headers=headers)).status_code == 200
    forbidden = await secured.get("/projects/other", headers=headers)
    assert forbidden.status_code == 403
    assert forbidden.json()["code"] == "project_forbidden"
    assert (await secured.delete("/projects/other", headers=headers)).status_code == 403
    assert (await secured.post("/projects", json={"id": "new-one"}, headers=headers)).status_code == 403
    assert (await secured.get("/projects/other", headers={"X-API-Key": ADMIN})).status_code == 200


async def test_scope_applies_to_query_and_body_project_ids(start_app, make_settings):
    def setup(app):
        @app.get("/_probe")
        async def probe_get(project_id: str = "default"):
            return {"project_id": project_id}

        @app.post("/_probe")
        async def probe_post(body: dict):
            return body

    app = await start_app(make_settings(api_keys=["k:team"]), setup)
    headers = {"X-API-Key": "k"}
    assert (await app.http.get("/_probe?project_id=team", headers=headers)).status_code == 200
    assert (await app.http.get("/_probe?project_id=other", headers=headers)).status_code == 403
    assert (await app.http.get("/_probe", headers=headers)).status_code == 403  # omitted = default
    ok = await app.http.post("/_probe", json={"project_id": "team", "x": 1}, headers=headers)
    assert ok.status_code == 200 and ok.json() == {"project_id": "team", "x": 1}
    assert (await app.http.post("/_probe", json={"project_id": "other"}, headers=headers)).status_code == 403


@pytest.mark.parametrize(("keys", "allowed"), [([ADMIN], False), ([], True)])
async def test_open_paths_carry_a_principal_without_projects_when_keys_are_set(keys, allowed):
    """Health, metrics, docs and the UI's files need no key; whatever runs under them must not act on a project
    as if it had an unrestricted key."""
    import httpx
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from app.web.auth import ApiKeyMiddleware, parse_api_keys, principal_of

    async def probe(request):
        return JSONResponse({"default": principal_of(request).allows("default")})

    inner = Starlette(routes=[Route(path, probe) for path in ("/health", "/ui/probe")])
    app = ApiKeyMiddleware(inner, parse_api_keys(keys), open_paths={"/health"})
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as http:
        for path in ("/health", "/ui/probe"):
            answer = await http.get(path)
            assert answer.status_code == 200
            assert answer.json() == {"default": allowed}
