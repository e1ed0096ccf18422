"""Two people whose given names the match key reads as one ("Bob" / "Robert") end as two nodes in every
ingestion order once a document relates the two forms: documents naming each form alone may merge them first,
and the relating document then undoes that merge (app/services/ingest/absorb.py), restoring both from the
cached extractions with no extraction call."""

from __future__ import annotations

import itertools

import pytest
from sqlalchemy import select

from app.db.tables import entity_merge_ledger
from tests.ingest.test_pipeline import entity_line, ingest, relation_line, rows
from tests.ingest.test_resolution_ingest import graph, install
from tests.ingest.test_resolution_spelling_orders import quoted_person_doc

DOCS = ("bob doc", "robert doc", "both doc")
RECORDS = {
    "bob doc": quoted_person_doc("Bob Everly", "bob doc"),
    "robert doc": quoted_person_doc("Robert Everly", "robert doc"),
    "both doc": [
        entity_line("Bob Everly", "person", "Bob Everly runs the mill."),
        entity_line("Robert Everly", "person", "Robert Everly owns the farm."),
        relation_line("Bob Everly", "Robert Everly", "comparison", "Observers compared Bob Everly with Robert Everly."),
    ],
}


@pytest.mark.parametrize("order", list(itertools.permutations(DOCS)), ids=lambda o: " > ".join(o))
async def test_a_document_relating_two_forms_keeps_two_people_in_every_order(make_settings, start_app, fake_llm, order):
    app = await start_app(make_settings())
    install(fake_llm, RECORDS)
    for marker in order:
        [doc] = await ingest(app, [marker])
        assert doc["status"] == "processed"
    assert len(fake_llm.calls_of("extract")) == len(DOCS)  # the undoing reads the cached records

    keys, pairs = await graph(app)
    people = {k for k in keys if not k.startswith("clerk ")}
    assert people == {"bob everly", "robert everly"}
    ends = {frozenset(p) for p in pairs}
    assert frozenset({"bob everly", "robert everly"}) in ends
    # each clerk keeps the person its document quoted
    assert {e for e in ends if "clerk bob doc" in e} == {frozenset({"bob everly", "clerk bob doc"})}
    assert {e for e in ends if "clerk robert doc" in e} == {frozenset({"robert everly", "clerk robert doc"})}
    ledger = await rows(app, select(entity_merge_ledger.c.merged_key, entity_merge_ledger.c.outcome))
    assert all(r["outcome"] is not None for r in ledger), ledger  # a merge made earlier is marked undone
