"""End to end: documents ingested through POST /documents (real pipeline, fake LLM), then queried."""

from __future__ import annotations

STORY = (
    "Charlie Gordon works at a bakery and wants to become smart. "
    "Algernon the mouse solves mazes after an operation by Professor Nemur.\n\n"
    "Alice Kinnian teaches Charlie Gordon patiently, and their friendship becomes romance."
)


async def test_ingested_graph_answers_local_global_and_naive_queries(client, fake_llm):
    ingest = await client.post(
        "/documents", json={"documents": [{"text": STORY, "file_path": "story.txt"}], "wait": True}
    )
    assert ingest.status_code == 200, ingest.text
    assert ingest.json()["documents"][0]["status"] == "processed"
    fake_llm.calls.clear()

    local = await client.post("/query", json={"query": "Who is Charlie Gordon?", "mode": "local"})
    assert local.status_code == 200
    body = local.json()
    assert "Charlie Gordon" in body["keywords"]["low_level"]
    assert body["context"]["entities"][0]["name"] == "Charlie Gordon"
    assert any("bakery" in c["content"] for c in body["context"]["chunks"])
    assert body["references"][0]["file_path"] == "story.txt"
    assert body["response"].startswith("Answer to 'Who is Charlie Gordon?'")
    assert [c.operation for c in fake_llm.calls] == ["keywords", "query"]

    romance = await client.post(
        "/query",
        json={
            "query": "Is there a love story?",
            "mode": "global",
            "hl_keywords": ["friendship, romance"],
            "only_need_context": True,
        },
    )
    relations = romance.json()["context"]["relations"]
    shown = [c["content"] for c in romance.json()["context"]["chunks"]]
    # the relation's sentence is said once: by its description, or (left out there) by the chunk shown beside it
    assert relations and ("romance" in relations[0]["description"] or any("romance" in c for c in shown))
    assert {relations[0]["source"], relations[0]["target"]} == {"Alice Kinnian", "Charlie Gordon"}

    naive = await client.post(
        "/query", json={"query": "mazes operation mouse", "mode": "naive", "only_need_context": True}
    )
    assert "Algernon" in naive.json()["context"]["chunks"][0]["content"]
