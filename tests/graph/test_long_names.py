"""Names long in bytes: two 460-character Chinese names (1,380 bytes each) fit under the 1,000-character cap but
not, as a pair, in a PostgreSQL btree index row (2,704 bytes). The API refuses them with 422; extraction cuts
them to 1,024 bytes of key and counts them in the document's report, so the document is processed."""

from __future__ import annotations

from sqlalchemy import select

from app.db.tables import relations
from app.domain.names import NAME_MAX_BYTES
from tests.support.fakes.openai_server import COMPLETE, TUPLE
from tests.support.graph_factory import GraphFactory

# varied characters: an index row of one repeated character would be compressed small enough to fit
LONG_A = "".join(chr(0x4E00 + i * 7919 % 20000) for i in range(460))
LONG_B = "".join(chr(0x4E00 + i * 104729 % 20000) for i in range(460))


async def test_the_api_refuses_names_too_long_in_bytes_with_422(start_app, make_settings):
    app = await start_app(make_settings(worker_enabled=False))
    graph = GraphFactory()  # two such entities stored before names were limited in bytes
    chunk = graph.document("doc-1", "a.txt", ["长甲 and 长乙."])
    graph.entity(LONG_A, "concept", "The first.", chunk)
    graph.entity(LONG_B, "concept", "The second.", chunk)
    async with app.container.db.transaction() as conn:
        await graph.insert(conn)

    relation = {"source": LONG_A, "target": LONG_B, "description": "They are related."}
    for response in (
        await app.http.post("/relations", json=relation),
        await app.http.post(
            "/lightrag/graph/relation/create",
            json={"source_entity": LONG_A, "target_entity": LONG_B, "relation_data": {"description": "Related."}},
        ),
        await app.http.post("/entities/duplicates/reject", json={"entity_a": LONG_A, "entity_b": LONG_B}),
        await app.http.post("/entities", json={"name": "Short", "description": "Fine."}),
    ):
        assert response.status_code < 500, response.text
    assert (await app.http.post("/relations", json=relation)).status_code == 422
    created = await app.http.post("/entities", json={"name": LONG_A[::-1], "description": "Too long in bytes."})
    assert created.status_code == 422, created.text
    assert f"at most {NAME_MAX_BYTES} bytes" in created.text
    assert (await app.http.post("/entities/Short/aliases", json={"alias": LONG_B[:400]})).status_code == 422


async def test_an_extracted_pair_of_long_names_is_cut_and_counted_not_a_failed_document(
    start_app, make_settings, fake_llm
):
    app = await start_app(make_settings())
    fake_llm.handlers["extract"] = lambda messages: "\n".join(
        [
            f"entity{TUPLE}{LONG_A}{TUPLE}concept{TUPLE}The first long name.",
            f"entity{TUPLE}{LONG_B}{TUPLE}concept{TUPLE}The second long name.",
            f"relation{TUPLE}{LONG_A}{TUPLE}{LONG_B}{TUPLE}naming{TUPLE}The two long names belong together.",
            COMPLETE,
        ]
    )
    response = await app.http.post("/documents", json={"documents": [{"text": "Two long names."}], "wait": True})
    doc_id = response.json()["documents"][0]["id"]
    doc = (await app.http.get(f"/documents/{doc_id}")).json()
    assert doc["status"] == "processed", doc["error"]
    report = doc["extraction_report"]
    assert report["truncated_names"] == 4 and "too long" in report["warning"]
    async with app.container.db.connect() as conn:
        pairs = (await conn.execute(select(relations.c.src_key, relations.c.tgt_key))).all()
    assert len(pairs) == 1
    assert all(len(key.encode()) <= NAME_MAX_BYTES for key in pairs[0])
