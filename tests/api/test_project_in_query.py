"""A `project_id` in the query string of a route that reads its project elsewhere must name the project the
request acts on, else it is refused with a 422 saying where it goes, and nothing is done: ignored, it sent an
ingest, a cancel or an edit to the default project (the same text has the same document id in every project, so
a cancel there could stop another project's document). The same project in both places is accepted."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from app.db.tables import documents, entities

TEXT = "Mara Quell founded the Tessaly Salt Guild in 1877."


@pytest.fixture
async def app(make_settings, start_app):
    started = await start_app(make_settings())
    assert (await started.http.post("/projects", json={"id": "beta"})).status_code == 201
    return started


async def _count(app, table) -> int:
    async with app.container.db.connect() as conn:
        return (await conn.execute(select(func.count()).select_from(table))).scalar_one()


@pytest.mark.parametrize(
    ("method", "path", "body", "where"),
    [
        ("POST", "/documents", {"documents": [{"text": TEXT}]}, "give it in the JSON body"),
        ("POST", "/documents/doc-x/cancel", None, "give it in the JSON body"),
        ("POST", "/documents/retry-failed", {}, "give it in the JSON body"),
        (
            "POST",
            "/entities",
            {"name": "Mara Quell", "entity_type": "person", "description": "A founder."},
            "give it in the JSON body",
        ),
        ("POST", "/query", {"query": "Who founded the guild?"}, "give it in the JSON body"),
        ("GET", "/projects", None, "this route takes no project_id"),
        ("POST", "/lightrag/documents/text", {"text": TEXT, "file_source": "a.txt"}, "LIGHTRAG-WORKSPACE header"),
    ],
)
async def test_a_project_id_in_the_query_of_a_route_that_reads_it_elsewhere_is_refused(app, method, path, body, where):
    response = await app.http.request(method, path, params={"project_id": "beta"}, json=body)
    assert response.status_code == 422, response.text
    assert response.json()["code"] == "validation_error"
    assert where in response.json()["detail"] and f"{method} {path}" in response.json()["detail"]
    assert await _count(app, documents) == 0 and await _count(app, entities) == 0


async def test_an_upload_says_the_project_is_a_form_field(app):
    files = {"files": ("a.txt", TEXT.encode(), "text/plain")}
    response = await app.http.post("/documents/upload", params={"project_id": "beta"}, files=files)
    assert response.status_code == 422 and "as a form field" in response.json()["detail"]
    assert await _count(app, documents) == 0


async def test_the_same_project_in_the_query_and_where_the_route_reads_it_is_accepted(app):
    body = {"project_id": "beta", "documents": [{"text": TEXT}], "wait": True}
    assert (await app.http.post("/documents", json=body, params={"project_id": "beta"})).status_code == 200
    listed = await app.http.get("/documents", params={"project_id": "beta"})
    assert listed.status_code == 200 and listed.json()["total"] == 1
    assert (await app.http.get("/projects/beta", params={"project_id": "beta"})).status_code == 200
    other = await app.http.get("/projects/beta", params={"project_id": "default"})
    assert other.status_code == 422 and "the path names the project" in other.json()["detail"]
    workspace = {"LIGHTRAG-WORKSPACE": "beta"}
    same = await app.http.get("/lightrag/documents/status_counts", params={"project_id": "beta"}, headers=workspace)
    assert same.status_code == 200


async def test_a_chat_api_says_the_model_names_the_project(app):
    body = {"model": "lightrag:beta", "messages": [{"role": "user", "content": "Hi"}], "stream": False}
    response = await app.http.post("/api/chat", params={"project_id": "default"}, json=body)
    assert response.status_code == 422 and "the model ('lightrag:<project>') names the project" in response.text
    assert response.json()["code"] == "validation_error"  # in Ollama's error shape, with the service's code
