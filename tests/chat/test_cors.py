"""CORS_ORIGINS: browsers on the listed origins may call the API (preflights are answered before the API-key
check); without it no CORS header is sent."""

from __future__ import annotations

PREFLIGHT = {
    "Origin": "https://webui.example",
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "authorization, content-type",
}


async def test_preflight_and_answers_carry_cors_headers_for_listed_origins(start_app, make_settings):
    app = await start_app(make_settings(cors_origins="https://webui.example", api_keys="secret"))
    preflight = await app.http.options("/api/chat", headers=PREFLIGHT)
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == "https://webui.example"
    assert "POST" in preflight.headers["access-control-allow-methods"]
    assert "authorization" in preflight.headers["access-control-allow-headers"].lower()

    answered = await app.http.get(
        "/v1/models", headers={"Origin": "https://webui.example", "Authorization": "Bearer secret"}
    )
    assert answered.status_code == 200 and answered.headers["access-control-allow-origin"] == "https://webui.example"
    assert "X-Token-Input" in answered.headers["access-control-expose-headers"]
    refused = await app.http.get("/v1/models", headers={"Origin": "https://webui.example"})
    assert refused.status_code == 401 and refused.headers["access-control-allow-origin"] == "https://webui.example"

    other = await app.http.options("/api/chat", headers={**PREFLIGHT, "Origin": "https://evil.example"})
    assert other.status_code == 400 and "access-control-allow-origin" not in other.headers


async def test_no_cors_headers_by_default(start_app, make_settings):
    app = await start_app(make_settings(api_keys="secret"))
    preflight = await app.http.options("/api/chat", headers=PREFLIGHT)
    assert preflight.status_code == 401 and "access-control-allow-origin" not in preflight.headers
    answered = await app.http.get(
        "/api/tags", headers={"Origin": "https://webui.example", "Authorization": "Bearer secret"}
    )
    assert answered.status_code == 200 and "access-control-allow-origin" not in answered.headers
