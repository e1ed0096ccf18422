"""The database stops during an ingestion batch (a dedicated embedded PostgreSQL, not the session one): requests
answer 503 while it is down, the service and its worker recover by themselves when it returns, every document
ends processed or failed with a reason, and after retrying the failed ones the graph equals a clean run."""

from __future__ import annotations

import asyncio

import pytest

from app.services.ingest.intake import IngestionService
from tests.support.faults import (
    TEXTS,
    all_finished,
    dedicated_pg_server,
    document_rows,
    graph_counts,
    graph_rows,
    start_pg,
    stop_pg,
    until,
)

pytestmark = pytest.mark.slow  # a PostgreSQL server of its own, stopped and restarted

BATCH = [
    *TEXTS,
    "Erik Lund met Frida Holm in Oslo. Frida Holm leads Polar Works.",
    "Gustav Berg sold Polar Works to Acme Labs. Alice Walker approved the deal.",
]


@pytest.fixture
def own_server():
    with dedicated_pg_server("outage") as server:
        yield server


async def test_database_stopped_during_ingestion(own_server, make_settings, start_app, fake_llm):
    socket_dir = own_server.get_postmaster_info().socket_dir
    app = await start_app(
        make_settings(
            database_url=f"postgresql://postgres@/outage?host={socket_dir}",
            worker_claim_timeout=2,
            worker_heartbeat_interval=0.2,
            llm_max_retries=0,
            embedding_max_retries=0,
        )
    )
    http, db = app.http, app.container.db
    for project in ("clean", "faulty"):
        assert (await http.post("/projects", json={"id": project})).status_code == 201
    clean = await http.post(
        "/documents", json={"project_id": "clean", "documents": [{"text": t} for t in BATCH], "wait": True}
    )
    assert {d["status"] for d in clean.json()["documents"]} == {"processed"}

    fake_llm.latency = 0.4  # documents are mid-extraction when the database goes away
    body = {"project_id": "faulty", "documents": [{"text": t} for t in BATCH]}
    ids = [d["id"] for d in (await http.post("/documents", json=body)).json()["documents"]]

    async def extracting() -> bool:
        return fake_llm.in_flight > 0

    await until(extracting)
    await asyncio.to_thread(stop_pg, own_server)
    try:
        down = [
            await http.get("/documents", params={"project_id": "faulty"}),
            await http.post("/documents", json={"project_id": "faulty", "documents": [{"text": "Late text."}]}),
            await http.post("/query", json={"project_id": "faulty", "query": "Who is Alice Walker?"}),
            await http.get("/entities", params={"project_id": "faulty"}),
            await http.get(f"/documents/{ids[0]}", params={"project_id": "faulty"}),
            await http.post(f"/documents/{ids[0]}/retry", json={"project_id": "faulty"}),
            await http.get("/export", params={"project_id": "faulty"}),
        ]
        health = await http.get("/health")
        assert health.status_code == 503 and "Traceback" not in health.text
        for response in down:
            assert response.status_code == 503, response.text
            # refused while it shuts down, or its socket is gone: both say "unavailable", never a 500
            assert response.json()["code"] in ("database_unavailable", "service_unavailable")

        async def calls_drained() -> bool:  # the in-flight documents ran into the outage
            return fake_llm.in_flight == 0

        await until(calls_drained)
    finally:
        await asyncio.to_thread(start_pg, own_server)
    fake_llm.latency = 0

    recovered = await http.get("/documents", params={"project_id": "faulty"})
    assert recovered.status_code == 200  # the pool reconnects by itself

    async def finished() -> bool:
        return await all_finished(db, "faulty")

    await until(finished, limit=60)
    docs = await document_rows(db, "faulty")
    assert set(docs) == set(ids)
    failed = [d for d in docs.values() if d["status"] == "failed"]
    assert all(d["error"] for d in failed)
    for doc in failed:
        assert (await http.post(f"/documents/{doc['id']}/retry", json={"project_id": "faulty"})).status_code == 200
    done, states = await IngestionService(app.container).wait_until_done("faulty", ids, limit=60)
    assert done and {s.status for s in states.values()} == {"processed"}
    assert await graph_counts(db, "faulty") == await graph_counts(db, "clean")
    assert await graph_rows(db, "faulty") == await graph_rows(db, "clean")
