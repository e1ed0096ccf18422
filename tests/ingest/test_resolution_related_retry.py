"""The undo of a merge a document contradicts ("Robert Everly" merged into "Bob Everly", then a document relating
the two) happens however the document's processing ends once its merge has committed: a failure after the merge
and a retry, or its worker gone and another one finishing it. The later attempt has no extractions in hand; it
reads the document's stored records (no extraction call), and ends with two people and the merge marked undone."""

from __future__ import annotations

from sqlalchemy import select

from app.db.tables import documents, entity_merge_ledger
from app.services.ingest.intake import IngestionService
from tests.ingest.test_pipeline import ingest, rows, scalar
from tests.ingest.test_resolution_ingest import graph, install
from tests.ingest.test_resolution_related_orders import RECORDS
from tests.support.curation import Parked


async def _merged_pair(app, fake_llm) -> None:
    """The two forms, each alone in its document, merged into one person."""
    install(fake_llm, RECORDS)
    for marker in ("bob doc", "robert doc"):
        [doc] = await ingest(app, [marker])
        assert doc["status"] == "processed"
    keys, _ = await graph(app)
    assert len({k for k in keys if not k.startswith("clerk ")}) == 1
    assert [r["outcome"] for r in await rows(app, select(entity_merge_ledger))] == [None]


async def _two_people_again(app, fake_llm) -> None:
    keys, pairs = await graph(app)
    assert {k for k in keys if not k.startswith("clerk ")} == {"bob everly", "robert everly"}
    assert frozenset({"bob everly", "robert everly"}) in {frozenset(p) for p in pairs}
    ledger = await rows(app, select(entity_merge_ledger))
    assert ledger and all(r["outcome"] is not None for r in ledger), ledger  # marked undone
    assert len(fake_llm.calls_of("extract")) == 3  # the later attempt read the stored records


async def test_a_retry_after_the_merge_committed_undoes_the_contradicted_merge(make_settings, start_app, fake_llm):
    # heartbeats (and sweeps: test_review_sweep.py) far apart, so only the retry undoes the merge here
    app = await start_app(
        make_settings(
            force_llm_summary_on_merge=2,
            llm_max_retries=0,
            worker_heartbeat_interval=600.0,
            worker_claim_timeout=1800.0,
        )
    )
    await _merged_pair(app, fake_llm)
    fake_llm.fail_next(1, status=500, operation="summary")  # the relating document fails after its merge
    [doc] = await ingest(app, ["both doc"])
    assert doc["status"] == "failed"
    assert await scalar(app, select(documents.c.graph_merged).where(documents.c.id == doc["id"]))
    keys, _ = await graph(app)
    assert "robert everly" not in keys  # the failed attempt never reached its undo
    assert {r["outcome"] for r in await rows(app, select(entity_merge_ledger))} == {None}

    await app.http.post(f"/documents/{doc['id']}/retry", json={"project_id": "default"})
    done, _ = await IngestionService(app.container).wait_until_done("default", [doc["id"]], limit=30)
    assert done
    await _two_people_again(app, fake_llm)


async def test_another_worker_finishing_the_document_undoes_the_contradicted_merge(make_settings, start_app, fake_llm):
    first = await start_app(make_settings(force_llm_summary_on_merge=2, max_parallel_insert=1))
    await _merged_pair(first, fake_llm)
    parked = Parked(None)
    fake_llm.handlers["summary"] = parked  # holds the relating document after its merge committed
    response = await first.http.post("/documents", json={"documents": [{"text": "both doc"}]})
    assert response.status_code == 202, response.text
    doc_id = response.json()["documents"][0]["id"]
    await parked.wait_arrived(1)
    assert await scalar(first, select(documents.c.graph_merged).where(documents.c.id == doc_id))
    await first.container.worker.stop()  # the worker goes before the undo; its claim returns to the queue
    parked.release()

    second = await start_app(make_settings(force_llm_summary_on_merge=2, max_parallel_insert=1))
    done, _ = await IngestionService(second.container).wait_until_done("default", [doc_id], limit=30)
    assert done
    assert await scalar(second, select(documents.c.status).where(documents.c.id == doc_id)) == "processed"
    await _two_people_again(second, fake_llm)
