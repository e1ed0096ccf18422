"""A document's update runs the final pass of resolution as an ingestion does (app/services/update/runner.py):
a full name the new text brings absorbs an earlier document's short node ("Dr. Okafor" into "Ngozi Okafor"), the
same nodes and ledger rows as the new text ingested as a document; new text relating two forms another pair of
documents merged ("Bob Everly" / "Robert Everly") undoes that merge; an update failing for good after its swap is
reviewed by a worker's sweep, over the updated document's nodes; ENTITY_RESOLUTION=off runs no pass."""

from __future__ import annotations

from sqlalchemy import select

from app.db.tables import documents, entities, entity_merge_ledger, relations
from tests.ingest.test_pipeline import ingest, rows, scalar
from tests.ingest.test_resolution_final_pass import OKAFOR
from tests.ingest.test_resolution_ingest import graph, install
from tests.ingest.test_resolution_order import _doc
from tests.ingest.test_resolution_related_orders import RECORDS
from tests.ingest.test_resolution_related_retry import _merged_pair
from tests.ingest.test_review_sweep import QUIET

PLAIN = {"plain doc": _doc("Lantern Works", "organization", "plain doc")}  # the updated document's first text
WORLD = OKAFOR | PLAIN


async def update(app, doc_id: str, text: str, project_id: str = "default") -> dict:
    body = {"project_id": project_id, "text": text, "wait": True}
    response = await app.http.put(f"/documents/{doc_id}", json=body)
    assert response.status_code == 200, response.text
    return response.json()


async def project_graph(app, project_id: str) -> tuple[set[str], set[tuple[str, str]]]:
    keys = {r["key"] for r in await rows(app, select(entities.c.key).where(entities.c.project_id == project_id))}
    r = relations.c
    pairs = await rows(app, select(r.src_key, r.tgt_key).where(r.project_id == project_id))
    return keys, {(r["src_key"], r["tgt_key"]) for r in pairs}


async def ledger_of(app, project_id: str) -> list[tuple]:
    c = entity_merge_ledger.c
    found = await rows(
        app,
        select(c.entity_key, c.merged_key, c.merged_name, c.rule, c.document_id, c.retroactive, c.outcome)
        .where(c.project_id == project_id)
        .order_by(c.id),
    )
    return [tuple(r.values()) for r in found]


async def owing(app) -> list[str]:
    return [r["id"] for r in await rows(app, select(documents.c.id).where(documents.c.review_owed))]


async def make_project(app, project_id: str) -> None:
    response = await app.http.post("/projects", json={"id": project_id})
    assert response.status_code in (200, 201), response.text


async def test_a_full_name_an_update_brings_absorbs_as_the_same_text_ingested_does(make_settings, start_app, fake_llm):
    app = await start_app(make_settings())
    install(fake_llm, WORLD)
    for project in ("ingested", "updated"):
        await make_project(app, project)
        [older] = await ingest(app, ["second doc"], project_id=project, id="older")  # "Dr. Okafor"
        assert older["status"] == "processed"
    [doc] = await ingest(app, ["first doc"], project_id="ingested", id="guide")  # "Ngozi Okafor"
    assert doc["status"] == "processed"
    [doc] = await ingest(app, ["plain doc"], project_id="updated", id="guide")
    assert doc["status"] == "processed"
    assert "dr. okafor" in (await project_graph(app, "updated"))[0]
    result = await update(app, "guide", "first doc", project_id="updated")
    assert result["status"] == "processed" and result["version"] == 2, result

    ingested, updated = await project_graph(app, "ingested"), await project_graph(app, "updated")
    assert ingested[0] == {"ngozi okafor", "marta quell", "harbour office"}
    assert updated == ingested  # the same nodes and relations ("Dr. Okafor"'s relation moved to the full name)
    assert await ledger_of(app, "updated") == await ledger_of(app, "ingested")
    assert await ledger_of(app, "updated") == [
        ("ngozi okafor", "dr. okafor", "Dr. Okafor", "partial", "guide", True, None)
    ]
    assert await owing(app) == []  # the update's final write cleared its mark


async def test_an_update_relating_two_merged_forms_undoes_their_merge(make_settings, start_app, fake_llm):
    app = await start_app(make_settings())
    await _merged_pair(app, fake_llm)  # "Bob Everly" and "Robert Everly", each alone in its document: one node
    install(fake_llm, RECORDS | PLAIN)
    [doc] = await ingest(app, ["plain doc"], id="guide")
    assert doc["status"] == "processed"
    result = await update(app, "guide", "both doc")
    assert result["status"] == "processed", result
    await _two_people(app, fake_llm)


async def _two_people(app, fake_llm) -> None:
    keys, pairs = await graph(app)
    assert {k for k in keys if not k.startswith("clerk ")} == {"bob everly", "robert everly"}
    ends = {frozenset(p) for p in pairs}
    assert frozenset({"bob everly", "robert everly"}) in ends
    assert {e for e in ends if "clerk robert doc" in e} == {frozenset({"robert everly", "clerk robert doc"})}
    ledger = await rows(app, select(entity_merge_ledger))
    assert ledger and all(r["outcome"] == "undone" for r in ledger), ledger
    assert await owing(app) == []
    assert len(fake_llm.calls_of("extract")) == 4  # three documents and the update's one new chunk


async def test_an_update_failing_for_good_after_its_swap_is_reviewed_by_the_sweep(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(force_llm_summary_on_merge=2, llm_max_retries=0, **QUIET))
    await _merged_pair(app, fake_llm)
    install(fake_llm, RECORDS | PLAIN)
    [doc] = await ingest(app, ["plain doc"], id="guide")
    assert doc["status"] == "processed"
    fake_llm.fail_next(1, status=500, operation="summary")  # after the swap: the merged person's summary
    result = await update(app, "guide", "both doc")
    assert result["status"] == "failed", result
    update_id = result["update_id"]
    assert update_id == "guide@v2"
    assert await scalar(app, select(documents.c.graph_merged).where(documents.c.id == update_id))
    assert await scalar(app, select(documents.c.version).where(documents.c.id == "guide")) == 2  # swapped
    assert "robert everly" not in (await graph(app))[0]  # the failed attempt never reached its final pass
    assert await owing(app) == [update_id]

    assert await app.container.worker.sweep_reviews() == 1
    await _two_people(app, fake_llm)  # the review was of the updated document's nodes and records
    assert await scalar(app, select(documents.c.status).where(documents.c.id == update_id)) == "failed"
    assert await scalar(app, select(documents.c.status).where(documents.c.id == "guide")) == "processed"
    assert await app.container.worker.sweep_reviews() == 0


async def test_with_resolution_off_an_update_runs_no_pass_and_owes_none(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(entity_resolution="off"))
    install(fake_llm, WORLD)
    await ingest(app, ["second doc"], id="older")
    await ingest(app, ["plain doc"], id="guide")
    reviewed = []
    absorber = app.container.worker.pipeline.absorber
    real_review = absorber.review

    async def review(*args, **kwargs) -> None:
        reviewed.append(args)
        await real_review(*args, **kwargs)

    absorber.review = review
    result = await update(app, "guide", "first doc")
    assert result["status"] == "processed", result
    assert reviewed == []
    keys, _ = await graph(app)
    assert {"dr. okafor", "ngozi okafor"} <= keys  # the pass would have absorbed the short node
    assert await rows(app, select(entity_merge_ledger)) == []
    assert not await scalar(app, select(documents.c.review_owed).where(documents.c.id == "guide@v2"))
