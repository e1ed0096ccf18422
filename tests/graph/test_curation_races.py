"""Curation racing deletion and other curation: deterministic interleavings, checked against the graph's
invariants (no provenance of a deleted document anywhere, relations with existing ends, degrees that match)."""

from __future__ import annotations

import asyncio
import json
from collections import Counter

import pytest
from sqlalchemy import select

from app.db.tables import entities, entity_sources, relation_sources, relations
from app.domain.names import entity_key, sorted_pair
from app.domain.texts import entity_embedding_text, relation_embedding_text, text_hash
from app.repositories import graph as graph_repo
from app.services.deletion import service as deletion_service
from tests.support.curation import Parked, queued_behind_another, rows, seed_graph

DOC1 = "Alice met Bob in Paris."
DOC2 = "Alice trained Zorro in secret."  # the only source of the Alice–Zorro relation
DOC3 = "Zorro guards Rome."  # keeps Zorro alive when DOC2 goes
SECRET = "trained Zorro"
MERGED_TEXT = "Bob, who absorbed Alice."


async def _ingest(app, text: str, path: str) -> str:
    response = await app.http.post("/documents", json={"documents": [{"text": text, "file_path": path}], "wait": True})
    assert response.status_code == 200, response.text
    [item] = response.json()["documents"]
    assert item["status"] == "processed", item
    return item["id"]


async def _three_docs(app) -> list[str]:
    return [await _ingest(app, text, f"doc{i}.txt") for i, text in enumerate((DOC1, DOC2, DOC3), start=1)]


async def _context(app) -> str:
    texts = []
    for mode in ("local", "global", "hybrid", "mix"):
        response = await app.http.post(
            "/query",
            json={
                "query": "Whom did Bob or Alice train, and where is Zorro?",
                "mode": mode,
                "only_need_context": True,
                "ll_keywords": ["Bob", "Zorro", "Alice"],
                "hl_keywords": ["training", "secret"],
            },
        )
        assert response.status_code == 200, response.text
        texts.append(json.dumps(response.json()["context"]))
    return "\n".join(texts)


async def _assert_document_gone(app, doc_id: str, path: str) -> None:
    async with app.container.db.connect() as conn:
        for table in (entity_sources, relation_sources):
            left = await conn.execute(select(table).where(table.c.document_id == doc_id))
            assert left.first() is None, table.name
        rels = await rows(conn, relations)
        with_provenance = {(r["src_key"], r["tgt_key"]) for r in await rows(conn, relation_sources)}
    pairs = {(r["src_key"], r["tgt_key"]) for r in rels}
    assert sorted_pair("bob", "zorro") not in pairs
    assert pairs <= with_provenance  # every relation here came from documents: none may lose all provenance
    bob = (await app.http.get("/entities/Bob")).json()
    assert all(not s.startswith(doc_id) for s in bob["source_ids"]), bob["source_ids"]
    assert doc_id not in {s["document_id"] for s in bob["source_chunks"]}
    assert path not in bob["file_paths"]
    assert SECRET not in await _context(app)
    assert (await app.http.delete(f"/documents/{doc_id}")).status_code == 404


async def test_document_deleted_during_a_slow_merge_leaves_nothing_behind(start_app, make_settings, fake_llm):
    """The merge of Alice into Bob waits on the LLM for Bob's new text while DOC2 is deleted: DOC2 gave
    Alice–Zorro, which the merge moves to Bob–Zorro. Whichever order they end up in, nothing of DOC2 stays."""
    app = await start_app(make_settings())
    _, doc2, _ = await _three_docs(app)
    assert SECRET in await _context(app)  # the query does reach the relation while it exists
    parked = Parked(MERGED_TEXT)
    fake_llm.handlers["summary"] = parked
    merge = asyncio.create_task(
        app.http.post(
            "/entities/merge", json={"source_entities": ["Alice"], "target_entity": "Bob", "strategy": "llm_summarize"}
        )
    )
    try:
        await parked.wait_arrived()
        deletion = asyncio.create_task(app.http.delete(f"/documents/{doc2}"))
        await queued_behind_another(app, deletion)
    finally:
        parked.release()
    assert (await merge).status_code == 200, (await merge).text
    assert (await deletion).status_code == 200, (await deletion).text
    await _assert_document_gone(app, doc2, "doc2.txt")
    bob = (await app.http.get("/entities/Bob")).json()
    # the merge's summary was made of DOC2's text too: the deletion rebuilt Bob from what remains
    assert bob["description"] == "Alice met Bob in Paris." and bob["aliases"] == ["Alice"]
    assert (await app.http.get("/entities/Alice")).json()["name"] == "Bob"  # the merged name is an alias now


@pytest.mark.parametrize("plans_outside_locks", [3, 0], ids=["plan-outside-locks", "plan-under-locks"])
async def test_provenance_moved_between_reading_and_locking_is_followed(
    start_app, make_settings, monkeypatch, plans_outside_locks
):
    """Another replica merges Alice into Bob right before the deletion takes its key locks (after it read
    the document's keys, in the old order): the deletion must follow DOC2's provenance to Bob, and write
    only while holding Bob's lock, also when it re-plans under the locks instead of starting over."""
    monkeypatch.setattr(deletion_service, "_PLANS_OUTSIDE_LOCKS", plans_outside_locks)
    app = await start_app(make_settings())
    _, doc2, _ = await _three_docs(app)
    replica = await start_app(make_settings(worker_enabled=False))  # same database, its own pool and gates
    real_lock = graph_repo.lock_keys
    deletion: asyncio.Task | None = None
    merging = asyncio.Event()  # set before merging: the replica's merge runs in this task and locks keys too
    merged: list[int] = []
    locked: list[set[str]] = []  # key sets the deletion locked, in order

    async def lock_keys(conn, project_id, keys):
        if asyncio.current_task() is deletion and not merging.is_set():
            merging.set()
            # (a merge's own text is curated and kept by deletions, so it must not quote DOC2 here)
            merged.append(
                (
                    await replica.http.post(
                        "/entities/merge",
                        json={
                            "source_entities": ["Alice"],
                            "target_entity": "Bob",
                            "target_entity_data": {"description": MERGED_TEXT},
                        },
                    )
                ).status_code
            )
            locked.append(set(keys))
        elif asyncio.current_task() is deletion and merged:
            locked.append(set(keys))
        return await real_lock(conn, project_id, keys)

    monkeypatch.setattr(graph_repo, "lock_keys", lock_keys)
    deletion = asyncio.create_task(app.http.delete(f"/documents/{doc2}"))
    response = await deletion
    assert merged == [200]
    assert response.status_code == 200, response.text
    assert "alice" in locked[0] and "bob" not in locked[0]  # the merge did move DOC2's provenance out of reach
    assert "bob" in locked[-1]
    await _assert_document_gone(app, doc2, "doc2.txt")


# ----- concurrent merges whose relations share far ends -----

# Three merges (A→B, X→Y, P→Q) over a triangle A–X–P, each corner also linked to the hub H, which B
# already knows: every merge moves relations whose other end another merge deletes at the same time.
_ENTS = [(n, "thing", f"{n} is entity {n}.", [f"c{n}"]) for n in ("A", "B", "X", "Y", "P", "Q", "H")]
_RELS = [
    ("A", "X", "A with X.", "ax", 1.0, ["cA"]),
    ("X", "P", "X with P.", "xp", 2.0, ["cX"]),
    ("P", "A", "P with A.", "pa", 4.0, ["cP"]),
    ("A", "H", "A near H.", "ah", 8.0, ["cA"]),
    ("X", "H", "X near H.", "xh", 16.0, ["cX"]),
    ("P", "H", "P near H.", "ph", 32.0, ["cP"]),
    ("B", "H", "B near H.", "bh", 64.0, ["cB"]),
]
_MERGES = {"A": "B", "X": "Y", "P": "Q"}


def _expected_relations() -> dict[tuple[str, str], tuple[float, set[str]]]:
    """Order-independent outcome: each relation's ends mapped through the merges, weights added."""
    out: dict[tuple[str, str], tuple[float, set[str]]] = {}
    for a, b, _, _, weight, chunks in _RELS:
        ends = sorted_pair(entity_key(_MERGES.get(a, a)), entity_key(_MERGES.get(b, b)))
        total, sources = out.get(ends, (0.0, set()))
        out[ends] = (total + weight, sources | set(chunks))
    return out


async def test_concurrent_merges_sharing_far_ends_answer_and_stay_consistent(start_app, make_settings, fake_llm):
    app = await start_app(make_settings(worker_enabled=False))
    async with app.container.db.transaction() as conn:
        await seed_graph(conn, docs={"d": [f"c{n}" for n in "ABXYPQH"]}, ents=_ENTS, rels=_RELS)
    parked = Parked(None, until_arrived=len(_MERGES))  # all three merges have read their relations
    fake_llm.handlers["summary"] = parked
    try:
        responses = await asyncio.gather(
            *(
                app.http.post(
                    "/entities/merge",
                    json={"source_entities": [src], "target_entity": tgt, "strategy": "llm_summarize"},
                )
                for src, tgt in _MERGES.items()
            )
        )
    finally:
        parked.release()
    assert [r.status_code for r in responses] == [200] * len(_MERGES), [r.text for r in responses]

    async with app.container.db.connect() as conn:
        ents = {r["key"]: r for r in await rows(conn, entities)}
        rels = {(r["src_key"], r["tgt_key"]): r for r in await rows(conn, relations)}
        provenance: dict[tuple[str, str], set[str]] = {}
        for r in await rows(conn, relation_sources):
            provenance.setdefault((r["src_key"], r["tgt_key"]), set()).add(r["chunk_id"])
    assert set(ents) == {"b", "y", "q", "h"}
    expected = _expected_relations()
    assert set(rels) == set(expected)
    for pair, (weight, chunks) in expected.items():
        assert rels[pair]["weight"] == weight and provenance[pair] == chunks, pair
    degree = Counter(k for pair in rels for k in pair)
    for key, row in ents.items():
        assert row["degree"] == degree[key], key
    for key in ("b", "y", "q"):
        row = ents[key]
        assert row["embedded_hash"] == text_hash(entity_embedding_text(row["name"], row["description"])), key
    for (s, t), row in rels.items():
        assert row["embedded_hash"] == text_hash(
            relation_embedding_text(ents[s]["name"], ents[t]["name"], row["keywords"], row["description"])
        ), (s, t)
