"""The LIGHTRAG-WORKSPACE header picks the project and goes through the API key's project scope check;
unsupported LightRAG routes answer 501; the prefix is configurable and can be turned off."""

from __future__ import annotations

import httpx
import pytest

from app.adapters.lightrag.routes import build_router
from tests.compat.conftest import SCOPED_KEY, CompatService


def test_scoped_key_naming_another_workspace_is_forbidden(compat_service: CompatService):
    with compat_service.http(key=SCOPED_KEY, workspace="default") as http:
        for answer in (
            http.get("/documents/status_counts"),
            http.post("/query", json={"query": "Who is Charlie?"}),
            http.post("/documents/text", json={"text": "Not allowed here."}),
            http.get("/graph/label/list"),
        ):
            assert answer.status_code == 403 and answer.json()["code"] == "project_forbidden"
    with compat_service.http(key=SCOPED_KEY) as http:  # no header: the default project, also not in scope
        assert http.get("/documents/status_counts").status_code == 403
    with compat_service.http(key=SCOPED_KEY, workspace="other") as http:
        assert http.get("/documents/status_counts").status_code == 200
        assert "Professor Nemur" in http.get("/graph/label/list").json()


def test_workspace_isolates_projects(compat_service: CompatService):
    with compat_service.http(workspace="other") as http:
        labels = http.get("/graph/label/list").json()
    assert "Charlie Gordon" not in labels and "Professor Nemur" in labels


def test_bad_or_unknown_workspace(compat_service: CompatService):
    with compat_service.http(workspace="No Such/Space") as http:
        bad = http.get("/documents/status_counts")
    with compat_service.http(workspace="missing") as http:
        unknown = http.get("/documents/status_counts")
    assert bad.status_code == 422 and bad.json()["code"] == "invalid_workspace"
    assert unknown.status_code == 404 and unknown.json()["code"] == "project_not_found"


def test_missing_key_is_refused(compat_service: CompatService):
    assert httpx.get(compat_service.url + "/lightrag/health").status_code == 401


def test_health(compat_service: CompatService):
    with compat_service.http() as http:
        body = http.get("/health").json()
    assert body["status"] == "healthy" and body["workspace"] == "default" and body["pipeline_busy"] is False
    assert body["auth_mode"] == "enabled" and body["configuration"]["llm_model"] == "fake-llm"


@pytest.mark.parametrize(
    "method,path",
    [
        ("POST", "/documents/scan"),
        ("DELETE", "/documents"),
        ("POST", "/documents/clear_cache"),
        ("GET", "/auth-status"),
    ],
)
def test_unsupported_routes_answer_501(compat_service: CompatService, method: str, path: str):
    with compat_service.http() as http:
        answer = http.request(method, path)
    assert answer.status_code == 501
    assert answer.json()["code"] == "not_supported" and "Not supported" in answer.json()["detail"]


def test_prefix_is_configurable_and_can_be_off(make_settings):
    router = build_router("/compat")
    assert router is not None and router.prefix == "/compat"
    assert build_router("off") is None
    with pytest.raises(ValueError):
        make_settings(lightrag_compat_prefix="no-slash")
