"""Health, metrics, error handling, body limits."""

from __future__ import annotations

from sqlalchemy import text


async def test_health_ok(client):
    response = await client.get("/health")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"] == "ok"
    assert body["migrations"]["ok"] is True
    assert body["migrations"]["current"] == body["migrations"]["head"]
    assert body["llm"] == {"configured": True, "model": "fake-llm"}
    assert body["embedding"]["configured"] is True


async def test_health_reports_missing_providers(start_app, make_settings):
    app = await start_app(make_settings(llm_model=None, embedding_model=None))
    body = (await app.http.get("/health")).json()
    assert body["status"] == "ok"
    assert body["llm"]["configured"] is False
    assert body["embedding"]["configured"] is False


async def test_health_503_when_database_unreachable(app_client):
    from sqlalchemy.ext.asyncio import create_async_engine

    db = app_client.container.db
    await db.engine.dispose()
    db.engine = create_async_engine(db.engine.url.set(query={"host": "/nonexistent-socket-dir"}))
    response = await app_client.http.get("/health")
    assert response.status_code == 503
    assert response.json()["database"] == "unreachable"
    listing = await app_client.http.get("/projects")
    assert listing.status_code == 503
    assert listing.json()["code"] in {"database_unavailable", "service_unavailable"}


async def test_metrics_expose_http_and_pipeline_series(client):
    await client.get("/projects/default")
    await client.get("/projects/does-not-exist")
    text = (await client.get("/metrics")).text
    assert 'http_requests_total{method="GET",route="/projects/{project_id}",status="200"}' in text
    assert 'http_requests_total{method="GET",route="/projects/{project_id}",status="404"}' in text
    assert "http_request_duration_seconds_bucket" in text
    assert 'pipeline_documents{status="pending"}' in text
    assert "llm_calls_total" in text or "# HELP llm_calls_total" in text


async def test_unknown_route_is_404_json(client):
    response = await client.get("/nope")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


async def test_unexpected_error_is_500_without_trace(start_app, settings):
    def setup(app):
        @app.get("/boom")
        async def boom():
            raise RuntimeError("secret internals")

    app = await start_app(settings, setup)
    response = await app.http.get("/boom")
    assert response.status_code == 500
    body = response.json()
    assert body["code"] == "internal_error"
    assert "secret" not in response.text and "Traceback" not in response.text
    assert response.headers["x-request-id"] in body["detail"]
    assert response.headers["x-token-input"] == "0"


async def test_request_body_over_limit_is_413(start_app, make_settings):
    app = await start_app(make_settings(max_request_bytes=2048))
    response = await app.http.post("/projects", json={"id": "big", "name": "x" * 5000})
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"


async def test_health_is_unavailable_when_the_schema_is_not_at_the_head_revision(app_client):
    async with app_client.container.db.transaction() as conn:
        await conn.execute(text("UPDATE alembic_version SET version_num = '0001'"))
    response = await app_client.http.get("/health")
    assert response.status_code == 503
    assert response.json()["migrations"]["current"] == "0001"
    assert response.json()["migrations"]["ok"] is False


async def test_ui_redirects_are_relative_whatever_the_host_header_says(client):
    for path in ("/", "/ui"):
        response = await client.get(path, headers={"Host": "attacker.example"}, follow_redirects=False)
        assert (response.status_code, response.headers["location"]) == (307, "/ui/"), path
