"""A document that fails for good after its merge committed (no retry) still gets its resolution review: its merge
marked it as owing one, and a worker's sweep runs the final pass on what it stored (no extraction call), once,
however many workers sweep (app/services/ingest/review_sweep.py). Relating two writings of a person's name ("Bob
Everly" / "Robert Everly"), it undoes the standing merge of the two; naming in full what an earlier document gave
as a dotted acronym, it absorbs that node."""

from __future__ import annotations

import asyncio

from sqlalchemy import select, text, update

from app.db.tables import documents, entity_merge_ledger
from app.repositories import owed_reviews as repo
from app.services.ingest.intake import IngestionService
from app.worker.queue import Worker
from tests.ingest.test_pipeline import entity_line, ingest, rows, scalar
from tests.ingest.test_resolution_ingest import graph, install
from tests.ingest.test_resolution_order import _doc
from tests.ingest.test_resolution_related_retry import _merged_pair

QUIET = {"worker_heartbeat_interval": 600.0, "worker_claim_timeout": 1800.0}  # no sweep but the one at start


async def _failed_for_good(app, fake_llm) -> str:
    """The two forms merged, then the relating document failing after its merge (a 500 on its summary, no retry)."""
    await _merged_pair(app, fake_llm)
    fake_llm.fail_next(1, status=500, operation="summary")
    [doc] = await ingest(app, ["both doc"])
    assert doc["status"] == "failed"
    assert await scalar(app, select(documents.c.graph_merged).where(documents.c.id == doc["id"]))
    assert "robert everly" not in (await graph(app))[0]
    assert await _owing(app) == [doc["id"]]
    return doc["id"]


async def _owing(app) -> list[str]:
    return [r["id"] for r in await rows(app, select(documents.c.id).where(documents.c.review_owed))]


async def _two_people_nothing_lost(app, fake_llm) -> None:
    keys, pairs = await graph(app)
    assert {k for k in keys if not k.startswith("clerk ")} == {"bob everly", "robert everly"}
    ends = {frozenset(p) for p in pairs}
    assert frozenset({"bob everly", "robert everly"}) in ends
    assert {e for e in ends if "clerk bob doc" in e} == {frozenset({"bob everly", "clerk bob doc"})}
    assert {e for e in ends if "clerk robert doc" in e} == {frozenset({"robert everly", "clerk robert doc"})}
    ledger = await rows(app, select(entity_merge_ledger))
    assert ledger and all(r["outcome"] == "undone" for r in ledger), ledger
    assert await _owing(app) == []  # nothing owed any more
    assert len(fake_llm.calls_of("extract")) == 3  # the sweep read the stored records


async def test_a_sweep_undoes_the_merge_a_document_failed_for_good_contradicts(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(force_llm_summary_on_merge=2, llm_max_retries=0, **QUIET))
    doc_id = await _failed_for_good(app, fake_llm)
    assert await app.container.worker.sweep_reviews() == 1
    await _two_people_nothing_lost(app, fake_llm)
    assert await scalar(app, select(documents.c.status).where(documents.c.id == doc_id)) == "failed"  # left as it was
    assert await app.container.worker.sweep_reviews() == 0


async def _no_sweep_loop(self) -> None:
    await asyncio.Event().wait()  # running (a worker with a finished loop counts as dead) but never sweeping


async def test_two_workers_sweeping_at_once_undo_the_merge_once(make_settings, start_app, fake_llm, monkeypatch):
    # Without their own sweep loops: the second worker's start-up sweep could take the row before the two below.
    monkeypatch.setattr(Worker, "_sweep_loop", _no_sweep_loop)
    settings = make_settings(force_llm_summary_on_merge=2, llm_max_retries=0, **QUIET)
    first = await start_app(settings)
    await _failed_for_good(first, fake_llm)
    second = await start_app(settings)
    workers = [first.container.worker, second.container.worker]
    done = await asyncio.gather(*(w.sweep_reviews() for w in workers))
    assert sorted(done) == [0, 1]  # the lease gives the row to one of them
    await _two_people_nothing_lost(first, fake_llm)


async def test_sweeps_past_their_lease_undo_the_merge_once(make_settings, start_app, fake_llm):
    """Both take the row (a lease of 0 s: as if each thought the other dead); the second undo is refused."""
    settings = make_settings(force_llm_summary_on_merge=2, llm_max_retries=0, **QUIET)
    first = await start_app(settings)
    await _failed_for_good(first, fake_llm)
    second = await start_app(settings)
    sweeps = [a.container.worker.pipeline.reviews for a in (first, second)]
    undos = [a.container.worker._undo_merge for a in (first, second)]
    await asyncio.gather(*(s.sweep(u, 0.0) for s, u in zip(sweeps, undos, strict=True)))
    await _two_people_nothing_lost(first, fake_llm)


async def test_a_worker_starting_sweeps_what_is_owed(make_settings, start_app, fake_llm):
    first = await start_app(make_settings(force_llm_summary_on_merge=2, llm_max_retries=0, **QUIET))
    await _failed_for_good(first, fake_llm)
    await first.container.worker.stop()
    second = await start_app(make_settings(force_llm_summary_on_merge=2, **QUIET))
    for _ in range(200):  # its sweep loop runs at start
        if not await _owing(second):
            break
        await asyncio.sleep(0.05)
    await _two_people_nothing_lost(second, fake_llm)


async def test_a_retry_that_undoes_the_merge_owes_nothing_after(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(force_llm_summary_on_merge=2, llm_max_retries=0, **QUIET))
    doc_id = await _failed_for_good(app, fake_llm)
    await app.http.post(f"/documents/{doc_id}/retry", json={"project_id": "default"})
    done, _ = await IngestionService(app.container).wait_until_done("default", [doc_id], limit=30)
    assert done
    await _two_people_nothing_lost(app, fake_llm)


async def test_only_documents_no_attempt_is_processing_are_swept(app_client):
    await app_client.container.worker.stop()  # nothing claims or sweeps the document but this test
    db = app_client.container.db
    async with db.transaction() as conn:
        await conn.execute(
            text(
                "INSERT INTO documents (project_id, id, status, content, content_hash, content_length)"
                " VALUES ('default', 'doc-x', 'processing', 'x', 'hash-x', 1)"
            )
        )
        await conn.execute(update(documents).where(documents.c.id == "doc-x").values(review_owed=True))
    async with db.transaction() as conn:
        assert await repo.take_owed(conn, 60.0) is None  # its attempt does the check
        await conn.execute(update(documents).where(documents.c.id == "doc-x").values(status="failed"))
    async with db.transaction() as conn:
        assert await repo.take_owed(conn, 60.0) == repo.Owed("default", "doc-x", "doc-x")
    async with db.transaction() as conn:
        assert await repo.take_owed(conn, 60.0) is None  # leased
    async with db.transaction() as conn:
        assert await repo.take_owed(conn, 0.0) == repo.Owed("default", "doc-x", "doc-x")  # the lease ran out
        await repo.reviewed(conn, "default", "doc-x")
        assert await repo.take_owed(conn, 0.0) is None


DOTTED = {  # no document defines it: the initials alone, written with dots, then the full name (twice: a summary)
    "first doc": _doc("R.F.S.B.", "organization", "first doc"),
    "second doc": [
        *_doc("Regional Food Security Board", "organization", "second doc"),
        entity_line("Regional Food Security Board", "organization", "The board meets in the second doc."),
    ],
}


async def test_a_sweep_absorbs_what_the_final_pass_of_a_document_failed_for_good_would_have(
    make_settings, start_app, fake_llm
):
    app = await start_app(make_settings(force_llm_summary_on_merge=2, llm_max_retries=0, **QUIET))
    install(fake_llm, DOTTED)
    await ingest(app, ["first doc"])
    fake_llm.fail_next(1, status=500, operation="summary")
    [doc] = await ingest(app, ["second doc"])
    assert doc["status"] == "failed"
    assert {"r.f.s.b.", "regional food security board"} <= (await graph(app))[0]  # never reached its final pass
    assert await _owing(app) == [doc["id"]]
    assert await app.container.worker.sweep_reviews() == 1
    keys, pairs = await graph(app)
    assert "r.f.s.b." not in keys and "regional food security board" in keys
    assert ("clerk first doc", "regional food security board") in pairs  # the dotted node's relation moved
    ledger = await rows(app, select(entity_merge_ledger))
    assert [(r["merged_key"], r["retroactive"]) for r in ledger] == [("r.f.s.b.", True)]
    assert await _owing(app) == []
    assert len(fake_llm.calls_of("extract")) == 2
