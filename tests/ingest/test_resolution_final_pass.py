"""The final pass of resolution (services/ingest/absorb.py::Absorber.review), run on the committed graph
after each document: two documents resolving at the same time still end with one node, and a document retried
after its merge committed still absorbs the earlier short node."""

from __future__ import annotations

import asyncio

from sqlalchemy import select

from app.db.tables import documents, entity_merge_ledger
from app.services.ingest.intake import IngestionService
from tests.ingest.test_pipeline import entity_line, ingest, relation_line, rows, scalar
from tests.ingest.test_resolution_ingest import graph, install
from tests.support.fakes.openai_server import COMPLETE, chunk_text

OKAFOR = {
    "first doc": [
        entity_line("Ngozi Okafor", "person", "Ngozi Okafor directs the lab."),
        entity_line("Ngozi Okafor", "person", "Ngozi Okafor wrote the survey."),
        entity_line("Marta Quell", "person", "Marta Quell is an archivist."),
        relation_line("Ngozi Okafor", "Marta Quell", "archive", "Marta Quell filed the survey."),
    ],
    "second doc": [
        entity_line("Dr. Okafor", "person", "Dr. Okafor gave a lecture."),
        entity_line("Harbour Office", "organization", "The Harbour Office keeps records."),
        relation_line("Dr. Okafor", "Harbour Office", "records", "The Harbour Office cites Dr. Okafor."),
    ],
}


async def test_a_document_retried_after_its_merge_still_absorbs(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(force_llm_summary_on_merge=2, llm_max_retries=0))
    install(fake_llm, OKAFOR)
    await ingest(app, ["second doc"])
    fake_llm.fail_next(1, status=500, operation="summary")  # fails the full name's document after its merge
    [doc] = await ingest(app, ["first doc"])
    assert doc["status"] == "failed"
    assert await scalar(app, select(documents.c.graph_merged).where(documents.c.id == doc["id"]))
    keys, _ = await graph(app)
    assert "dr. okafor" in keys  # the failed attempt never reached its absorption

    await app.http.post(f"/documents/{doc['id']}/retry", json={"project_id": "default"})
    done, _ = await IngestionService(app.container).wait_until_done("default", [doc["id"]], limit=30)
    assert done
    keys, _ = await graph(app)
    assert keys == {"ngozi okafor", "marta quell", "harbour office"}
    [row] = await rows(app, select(entity_merge_ledger))
    assert (row["entity_key"], row["merged_name"], row["retroactive"]) == ("ngozi okafor", "Dr. Okafor", True)


async def test_two_documents_resolving_at_once_end_with_one_node(make_settings, start_app, fake_llm):
    """Each extraction is held until the other one is asked for, so both documents resolve their names before
    either has committed: neither sees the other's form then, and the final pass of the later one joins them."""
    app = await start_app(make_settings(max_parallel_insert=4, max_gleaning=0))
    arrived: dict = {"both": None, "count": 0}

    async def extract(messages) -> str:
        if arrived["both"] is None:
            arrived["both"] = asyncio.Event()
        arrived["count"] += 1
        if arrived["count"] >= 2:
            arrived["both"].set()
        await asyncio.wait_for(arrived["both"].wait(), 30)
        text = chunk_text(messages)
        return "\n".join(next(v for k, v in OKAFOR.items() if k in text) + [COMPLETE])

    fake_llm.handlers["extract"] = extract
    results = await asyncio.gather(ingest(app, ["first doc"]), ingest(app, ["second doc"]))
    assert all(r[0]["status"] == "processed" for r in results)
    keys, _ = await graph(app)
    assert keys == {"ngozi okafor", "marta quell", "harbour office"}
