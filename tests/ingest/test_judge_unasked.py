"""The judge's candidates over its per-document cap (ENTITY_RESOLUTION=llm, app/domain/judge_candidates.py) are not
lost: each becomes a duplicate suggestion with the evidence "not asked: over the judge's per-document cap of 32",
listed by GET /entities/duplicates, and the document's report counts them; the pairs asked are the first in the
order of their keys, which a pair has whichever side is the document's and whatever its similarity read from
either side."""

from __future__ import annotations

from sqlalchemy import select

from app.db.tables import documents, entity_suggestions
from app.domain.judge_candidates import PER_DOCUMENT, Neighbour, choose
from app.domain.names import sorted_pair
from app.services.ingest import judge_candidates as candidates_service
from tests.graph.test_judge_candidate_rules import doc_of, near
from tests.ingest.test_judge_candidates import NEW_PORTS, OLD_PORTS, _many_ports
from tests.ingest.test_pipeline import ingest, rows
from tests.ingest.test_resolution_ingest import install
from tests.ingest.test_resolution_judge import judge_pairs
from tests.ingest.test_update_resolution import PLAIN, update

UNASKED = f"not asked: over the judge's per-document cap of {PER_DOCUMENT}"


def asked_pairs(call) -> set[tuple[str, str]]:
    return {sorted_pair(p["a"]["name"].lower(), p["b"]["name"].lower()) for p in judge_pairs(call.messages)}


async def test_pairs_over_the_cap_become_suggestions_and_are_counted(make_settings, start_app, fake_llm, monkeypatch):
    app = await start_app(make_settings(entity_resolution="llm", entity_judge_similarity=0.1))
    install(fake_llm, _many_ports())
    fake_llm.handlers["judge"] = lambda messages: '{"verdicts": []}'  # no verdict: every name stays a node
    [first] = await ingest(app, ["first doc"])
    [second] = await ingest(app, ["second doc"])
    calls = fake_llm.calls_of("judge")
    assert len(calls) == 2
    suggested = {(r["key_a"], r["key_b"]): r["evidence"] for r in await rows(app, select(entity_suggestions))}
    unasked = {pair for pair, evidence in suggested.items() if evidence.startswith(UNASKED)}
    assert unasked == set(suggested)  # no other suggestion in this world
    reports = {
        r["id"]: r["extraction_report"] for r in await rows(app, select(documents.c.id, documents.c.extraction_report))
    }
    first_over = {p for p in unasked if p[0] in OLD and p[1] in OLD}  # the first document's own names' pairs
    for doc, call, over in ((first, calls[0], first_over), (second, calls[1], unasked - first_over)):
        asked = asked_pairs(call)
        assert len(asked) == PER_DOCUMENT
        assert not asked & unasked  # a pair is asked or suggested, never both
        assert reports[doc["id"]]["judge_pairs_unasked"] == len(over) > 0
        assert max(asked) < min(over)  # the first pairs in key order asked, the rest suggested

    # nothing lost: without the cap, the judge is asked exactly the pairs asked or suggested with it
    monkeypatch.setattr(candidates_service, "PER_DOCUMENT", 10_000)
    response = await app.http.post("/projects", json={"id": "uncapped"})
    assert response.status_code in (200, 201), response.text
    await ingest(app, ["first doc"], project_id="uncapped")
    await ingest(app, ["second doc"], project_id="uncapped")
    uncapped = fake_llm.calls_of("judge")[2:]
    assert [asked_pairs(c) for c in uncapped] == [
        asked_pairs(calls[0]) | first_over,
        asked_pairs(calls[1]) | (unasked - first_over),
    ]

    listed = (await app.http.get("/entities/duplicates", params={"project_id": "default", "limit": 500})).json()
    shown = {
        sorted_pair(p["entity_a"].lower(), p["entity_b"].lower())
        for p in listed["pairs"]
        if any(e.startswith(UNASKED) for e in p["evidence"])
    }
    assert shown == unasked
    detail = (await app.http.get(f"/documents/{second['id']}", params={"project_id": "default"})).json()
    assert detail["extraction_report"]["judge_pairs_unasked"] == reports[second["id"]]["judge_pairs_unasked"]


OLD = {n.lower() for n in OLD_PORTS}
NEW = {n.lower() for n in NEW_PORTS}


def test_the_pairs_asked_do_not_follow_similarities_that_differ_by_side():
    """The stored side's embedding is of its description as merged by then, the document's of its own: the same
    pair reads a little differently from either side. The cap takes the same pairs both ways."""
    new = doc_of(*((f"Newport{i}", "location") for i in range(4)))
    old = doc_of(*((f"Oldport{j}", "location") for j in range(4)))
    forward: list[Neighbour] = []
    backward: list[Neighbour] = []
    for i in range(4):
        for j in range(4):
            base = 0.6 + ((i * 5 + j * 3) % 7) / 50
            forward.append(near(f"newport{i}", f"Oldport{j}", "location", base + (0.03 if (i + j) % 2 else 0.0)))
            backward.append(near(f"oldport{j}", f"Newport{i}", "location", base + (0.0 if (i + j) % 2 else 0.03)))
    for cap in (3, 7, 10):
        one = {frozenset((n.name_key, n.key)) for n in choose(forward, new, set(), per_document=cap)}
        other = {frozenset((n.name_key, n.key)) for n in choose(backward, old, set(), per_document=cap)}
        assert len(one) == cap
        assert one == other


async def test_an_updates_pairs_over_the_cap_are_counted_on_the_updates_report(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(entity_resolution="llm", entity_judge_similarity=0.1))
    install(fake_llm, _many_ports() | PLAIN)
    fake_llm.handlers["judge"] = lambda messages: '{"verdicts": []}'
    await ingest(app, ["first doc"], id="older")
    await ingest(app, ["plain doc"], id="guide")
    before = await report_of(app, "guide")
    assert (await update(app, "guide", "second doc"))["status"] == "processed"
    suggested = {(r["key_a"], r["key_b"]) for r in await rows(app, select(entity_suggestions))}
    over = {p for p in suggested if p[0] in NEW or p[1] in NEW}  # the update's names' pairs over its cap
    assert over
    assert (await report_of(app, "guide@v2"))["judge_pairs_unasked"] == len(over)
    assert await report_of(app, "guide") == before  # the document's own report is its first ingestion's


async def report_of(app, doc_id: str) -> dict:
    [row] = await rows(app, select(documents.c.extraction_report).where(documents.c.id == doc_id))
    return row["extraction_report"]
