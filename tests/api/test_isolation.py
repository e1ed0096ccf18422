"""Two projects with the same entity names and documents: nothing read or done on one returns or touches the
other's data, and project-scoped keys are enforced on every route that names a project."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from app.db.tables import chunks, documents, entities, entity_sources, llm_cache, relation_sources, relations
from tests.support.faults import TEXTS

ADMIN, KEY_A, KEY_B = "admin-key", "alpha-key", "beta-key"
H_ADMIN, H_A = {"X-API-Key": ADMIN}, {"X-API-Key": KEY_A}
ONLY_A, ONLY_B = "Zelda Moon visited Oslo with Alice Walker.", "Xavier Frost visited Oslo with Alice Walker."
MODES = ["local", "global", "hybrid", "mix", "naive", "bypass"]


@pytest.fixture
async def two(make_settings, start_app):
    app = await start_app(make_settings(api_keys=[ADMIN, f"{KEY_A}:alpha", f"{KEY_B}:beta"]))
    for project, own in (("alpha", ONLY_A), ("beta", ONLY_B)):
        assert (await app.http.post("/projects", json={"id": project}, headers=H_ADMIN)).status_code == 201
        body = {"project_id": project, "documents": [{"text": t} for t in [*TEXTS, own]], "wait": True}
        response = await app.http.post("/documents", json=body, headers={"X-API-Key": f"{project}-key"})
        assert {d["status"] for d in response.json()["documents"]} == {"processed"}
    return app


async def _snapshot(app, project_id: str) -> dict:
    """Every row of the project, vectors excepted (their hashes are kept)."""
    out = {}
    async with app.container.db.connect() as conn:
        for table in (documents, chunks, entities, relations, entity_sources, relation_sources, llm_cache):
            cols = [c for c in table.c if c.name not in ("embedding", "created_at", "updated_at", "heartbeat_at")]
            rows = (await conn.execute(select(*cols).where(table.c.project_id == project_id))).all()
            out[table.name] = sorted(json.dumps(list(r), default=str) for r in rows)
    return out


def _doc_id(app, text: str) -> str:
    from app.services.ingest.intake import content_hash  # noqa: PLC0415

    return f"doc-{content_hash(text)}"


async def test_reads_on_one_project_never_return_the_other(two, fake_llm):
    http = two.http
    only_b = _doc_id(two, ONLY_B)
    fake_llm.calls.clear()
    for mode in MODES:
        for extra in ({"only_need_context": True}, {}):
            body = {
                "project_id": "alpha",
                "query": "Who visited Oslo, Xavier Frost or Zelda Moon?",
                "mode": mode,
                **extra,
            }
            response = await http.post("/query", json=body, headers=H_A)
            assert response.status_code == 200, (mode, response.text)
            answer = response.json()
            context = json.dumps([answer["context"], answer["references"]])
            assert "Xavier" not in context and only_b not in context, mode
            if mode != "bypass":
                assert "Oslo" in context, mode  # the query did find alpha's own data
        stream = await http.post("/query/stream", json={**body, "query": "Tell me about Oslo"}, headers=H_A)
        assert stream.status_code == 200 and "Frost visited" not in stream.text
    prompts = [m["content"] for c in fake_llm.calls for m in c.messages if c.operation in ("query", "bypass")]
    assert prompts and all("Frost visited" not in p for p in prompts)  # beta's text reached no prompt

    reads = [
        ("/entities", {"q": "Frost"}),
        ("/entities", {}),
        ("/relations", {}),
        ("/relations", {"entity": "Oslo"}),
        ("/graph", {"label": "*"}),
        ("/graph", {"label": "Oslo"}),
        ("/documents", {}),
        ("/pipeline", {}),
        ("/export", {"format": "json", "include_chunks": "true"}),
        ("/entities/Oslo", {}),
        ("/projects/alpha", {}),
    ]
    for path, params in reads:
        response = await http.get(path, params={"project_id": "alpha", **params}, headers=H_A)
        assert response.status_code == 200, (path, response.text)
        assert "Xavier" not in response.text and only_b not in response.text, path
    for path in ("/entities/Xavier Frost", f"/documents/{only_b}", f"/documents/{only_b}/chunks"):
        missing = await http.get(path, params={"project_id": "alpha"}, headers=H_A)
        assert missing.status_code == 404, path
    listed = (await http.get("/entities", params={"project_id": "alpha", "limit": 1000}, headers=H_A)).json()
    names = {e["name"] for e in listed["entities"]}
    assert "Zelda Moon" in names and "Alice Walker" in names and "Xavier Frost" not in names


async def test_writes_and_deletes_on_one_project_leave_the_other_untouched(two):
    http = two.http
    before = await _snapshot(two, "beta")
    shared, only_b = _doc_id(two, TEXTS[0]), _doc_id(two, ONLY_B)
    calls = [
        ("PATCH", "/entities/Bob Stone", None, {"project_id": "alpha", "description": "changed in alpha"}, 200),
        ("POST", "/entities", None, {"project_id": "alpha", "name": "Xavier Frost", "description": "alpha's"}, 201),
        (
            "POST",
            "/entities/merge",
            None,
            {"project_id": "alpha", "source_entities": ["Carol King"], "target_entity": "Dmitri Volkov"},
            200,
        ),
        (
            "PATCH",
            "/relations",
            None,
            {
                "project_id": "alpha",
                "source": "Acme Labs",
                "target": "Nordwind Systems",
                "description": "changed in alpha",
            },
            200,
        ),
        (
            "POST",
            "/relations",
            None,
            {"project_id": "alpha", "source": "Oslo", "target": "Paris", "description": "alpha only"},
            201,
        ),
        ("DELETE", "/relations", {"project_id": "alpha", "source": "Alice Walker", "target": "Bob Stone"}, None, 200),
        ("DELETE", "/entities/Alice Walker", {"project_id": "alpha"}, None, 200),
        ("DELETE", f"/documents/{shared}", {"project_id": "alpha"}, None, 200),
        ("DELETE", f"/documents/{only_b}", {"project_id": "alpha"}, None, 404),
        ("POST", f"/documents/{only_b}/retry", None, {"project_id": "alpha"}, 404),
    ]
    for method, path, params, body, status in calls:
        response = await http.request(method, path, params=params, json=body, headers=H_A)
        assert response.status_code == status, (method, path, response.text)
    assert await _snapshot(two, "beta") == before
    assert (await http.delete("/projects/alpha", headers=H_A)).status_code == 204
    assert await _snapshot(two, "beta") == before


async def test_scoped_key_is_refused_on_every_route_of_the_other_project(two):
    http = two.http
    only_b = _doc_id(two, ONLY_B)
    beta = {"project_id": "beta"}
    calls = [
        ("GET", "/documents", beta, None),
        ("GET", f"/documents/{only_b}", beta, None),
        ("GET", f"/documents/{only_b}/chunks", beta, None),
        ("DELETE", f"/documents/{only_b}", beta, None),
        ("POST", f"/documents/{only_b}/retry", None, beta),
        ("GET", "/pipeline", beta, None),
        ("POST", "/documents", None, {"project_id": "beta", "documents": [{"text": "x"}]}),
        ("POST", "/query", None, {"project_id": "beta", "query": "Oslo"}),
        ("POST", "/query/stream", None, {"project_id": "beta", "query": "Oslo"}),
        ("GET", "/entities", beta, None),
        ("GET", "/entities/Oslo", beta, None),
        ("POST", "/entities", None, {"project_id": "beta", "name": "N", "description": "d"}),
        ("PATCH", "/entities/Oslo", None, {"project_id": "beta", "description": "d"}),
        ("DELETE", "/entities/Oslo", beta, None),
        ("POST", "/entities/merge", None, {"project_id": "beta", "source_entities": ["Oslo"], "target_entity": "X"}),
        ("GET", "/relations", beta, None),
        ("DELETE", "/relations", {**beta, "source": "a", "target": "b"}, None),
        ("PATCH", "/relations", None, {"project_id": "beta", "source": "a", "target": "b", "weight": 2}),
        ("GET", "/graph", beta, None),
        ("GET", "/export", beta, None),
        ("GET", "/projects/beta", None, None),
        ("DELETE", "/projects/beta", None, None),
        # naming an allowed project in one place and the other project in another is refused too
        ("POST", "/query", {"project_id": "alpha"}, {"project_id": "beta", "query": "Oslo"}),
        ("GET", "/documents", [("project_id", "alpha"), ("project_id", "beta")], None),
    ]
    before = await _snapshot(two, "beta")
    for method, path, params, body in calls:
        response = await http.request(method, path, params=params, json=body, headers=H_A)
        assert response.status_code == 403, (method, path, response.status_code, response.text)
        assert response.json()["code"] == "project_forbidden"
    upload = await http.post(
        "/documents/upload",
        params={"project_id": "alpha"},
        data={"project_id": "beta"},
        files=[("files", ("a.txt", b"Upload text.", "text/plain"))],
        headers=H_A,
    )
    assert upload.status_code == 403
    assert await _snapshot(two, "beta") == before
    allowed = await http.get("/documents", params={"project_id": "alpha"}, headers=H_A)
    assert allowed.status_code == 200 and allowed.json()["total"] == 4
