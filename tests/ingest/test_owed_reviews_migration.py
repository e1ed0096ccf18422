"""Migration 0023: rows merged before migration 0022 marked as owing their resolution review, so a worker's sweep
reviews them (app/services/ingest/review_sweep.py): a document merged and not processed (failed for good, and
one queued again, whose retry skips the merge and so never marks), and each document's last processed update
(updates ran no final pass before); not a document failed before its merge, nor a processed one. A document failed
for good as one did before 0022 (merged, unmarked) is then swept and its contradicted merge undone. With
ENTITY_RESOLUTION off or suggest the sweep reviews nothing and the marks wait."""

from __future__ import annotations

import importlib

import pytest
from sqlalchemy import text, update

from app.db.tables import documents
from tests.infra.test_migrations import _scratch_database, _upgrade_to
from tests.ingest.test_resolution_ingest import graph
from tests.ingest.test_review_sweep import QUIET, _failed_for_good, _owing, _two_people_nothing_lost

migration = importlib.import_module("migrations.versions.0023_owed_reviews_before_0022")

ROWS = [  # id, status, graph_merged, update_of, finished (minutes ago)
    ("failed-merged", "failed", True, None, 30),
    ("failed-early", "failed", False, None, 30),  # failed before its merge: nothing of it in the graph
    ("processed", "processed", True, None, 30),  # its attempt ran the pass
    ("cancelled-merged", "cancelled", True, None, 30),
    ("queued-again", "pending", True, None, None),  # a retry of a merged document: it skips the merge
    ("guide", "processed", True, None, 60),
    ("guide@v2", "processed", True, "guide", 50),
    ("guide@v3", "processed", True, "guide", 40),  # the document's last processed update
    ("guide@v4", "failed", False, "guide", 20),  # failed before its swap
    ("notes", "processed", True, None, 60),
    ("notes@v2", "failed", True, "notes", 10),  # failed after its swap
]


async def test_0023_marks_what_was_merged_before_0022_and_never_reviewed(pg_cluster):
    async with _scratch_database(pg_cluster, "owed_mig") as db:
        async with db.transaction() as c:
            await c.run_sync(_upgrade_to("0022"))
            for doc_id, status, merged, update_of, ago in ROWS:
                await c.execute(
                    text(
                        "INSERT INTO documents (project_id, id, status, content, content_hash, content_length,"
                        " graph_merged, update_of, finished_at)"
                        " VALUES ('default', :id, :status, 'x', :hash, 1, :merged, :update_of,"
                        " CASE WHEN CAST(:ago AS integer) IS NULL THEN NULL"
                        " ELSE now() - make_interval(mins => CAST(:ago AS integer)) END)"
                    ),
                    {
                        "id": doc_id,
                        "status": status,
                        "hash": f"hash-{doc_id}",
                        "merged": merged,
                        "update_of": update_of,
                        "ago": ago,
                    },
                )
            await c.run_sync(_upgrade_to("head"))
        async with db.connect() as c:
            owed = set((await c.execute(text("SELECT id FROM documents WHERE review_owed"))).scalars())
    assert owed == {"failed-merged", "cancelled-merged", "queued-again", "guide@v3", "notes@v2"}


async def _unmarked(app) -> None:
    """The document's mark removed: as a document failed for good after its merge was left before 0022."""
    async with app.container.db.transaction() as conn:
        await conn.execute(update(documents).values(review_owed=False))


async def test_a_document_failed_for_good_before_0022_is_swept_once_marked(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(force_llm_summary_on_merge=2, llm_max_retries=0, **QUIET))
    await _failed_for_good(app, fake_llm)
    await _unmarked(app)
    assert await app.container.worker.sweep_reviews() == 0  # never reviewed: what 0023 is for
    async with app.container.db.transaction() as conn:
        await conn.execute(text(migration.MERGED_NOT_PROCESSED))
        await conn.execute(text(migration.LAST_PROCESSED_UPDATES))
    assert len(await _owing(app)) == 1
    assert await app.container.worker.sweep_reviews() == 1
    await _two_people_nothing_lost(app, fake_llm)


@pytest.mark.parametrize("mode", ["off", "suggest"])
async def test_with_no_final_pass_in_the_mode_the_sweep_leaves_the_marks(make_settings, start_app, fake_llm, mode):
    first = await start_app(make_settings(force_llm_summary_on_merge=2, llm_max_retries=0, **QUIET))
    doc_id = await _failed_for_good(first, fake_llm)
    await first.container.worker.stop()
    second = await start_app(make_settings(entity_resolution=mode, **QUIET))
    assert await second.container.worker.sweep_reviews() == 0
    assert await _owing(second) == [doc_id]
    assert "robert everly" not in (await graph(second))[0]  # the merge stands
