"""What an agent gets to check an answer or to answer itself: `query` names the documents its claims cite and
quotes their passages; `retrieve_context` cut to a budget never leaves a graph description emptied for a
chunk it no longer shows."""

from __future__ import annotations

from tests.mcp.conftest import mcp_client, payload
from tests.support.fakes.cited_answers import chunk_with, citing

HARBOUR = "Carol Hale painted the harbour of Lisbon in 1990. The painting hangs in the Gulbenkian Museum."
PORTS = [
    f"Captain {name} sailed from Vela Port to {town} in {year}. {town} trades salt with Vela Port every spring."
    for name, town, year in [
        ("Ansel Brandt", "Korsholm", 1901),
        ("Mirela Oduya", "Tessaly", 1912),
        ("Piet Varga", "Ostrand", 1923),
        ("Lune Castell", "Bramhall", 1934),
        ("Odo Ferris", "Quillon", 1945),
        ("Ines Tamar", "Rovigno", 1956),
    ]
]


async def _add(app, project: str, texts: list[str]) -> None:
    documents = [
        {"text": text, "id": f"{project}-{i}", "file_path": f"{project}-{i}.txt"} for i, text in enumerate(texts)
    ]
    response = await app.http.post("/documents", json={"project_id": project, "documents": documents, "wait": True})
    assert response.status_code == 200, response.text
    assert {d["status"] for d in response.json()["documents"]} == {"processed"}


async def test_query_names_only_the_documents_its_claims_cite_and_quotes_their_passages(seeded, fake_llm):
    await _add(seeded, "alpha", [HARBOUR])  # a second document about Carol Hale, in the context but not cited
    fake_llm.handlers["query"] = citing(lambda chunks: f"Carol Hale visited Rome [{chunk_with(chunks, 'Rome')['id']}].")
    async with mcp_client(seeded.app) as client:
        answer = payload(
            await client.call_tool("query", {"question": "Where did Carol Hale go?", "project_id": "alpha"})
        )
        context = payload(
            await client.call_tool("retrieve_context", {"question": "Where did Carol Hale go?", "project_id": "alpha"})
        )
    assert {c["document_id"] for c in context["chunks"]} == {"doc-1", "alpha-0"}  # both were there to cite
    [reference] = answer["references"]
    assert reference["document_id"] == "doc-1" and reference["file_path"] == "notes.txt"
    assert answer["answer"] == f"Carol Hale visited Rome [{reference['reference_id']}]."
    [claim] = answer["claims"]
    assert claim["text"] == answer["answer"] and claim["support"] == "supported"
    [source] = claim["sources"]
    assert source["reference_id"] == reference["reference_id"]
    assert source["document_id"] == "doc-1" and source["file_path"] == "notes.txt"
    assert source["chunk_id"].startswith("doc-1") and source["quote"] == "Carol Hale visited Rome."


async def test_an_answer_the_sources_do_not_support_names_no_document(seeded, fake_llm):
    fake_llm.handlers["query"] = lambda messages: "Carol Hale flew to Oslo in 1975."
    async with mcp_client(seeded.app) as client:
        answer = payload(
            await client.call_tool("query", {"question": "Where did Carol Hale go?", "project_id": "alpha"})
        )
    assert answer["references"] == [] and [c["support"] for c in answer["claims"]] == ["unsupported"]
    assert answer["claims"][0]["sources"] == []


async def test_a_context_cut_to_its_budget_empties_no_description_for_a_chunk_it_no_longer_shows(seeded):
    await _add(seeded, "beta", PORTS)
    question = {"question": "Which captains sailed from Vela Port?", "project_id": "beta", "mode": "hybrid"}
    cut_chunk_items = 0
    async with mcp_client(seeded.app) as client:
        for budget in (600, 1000, 1500, 2500, 4000, 8000):
            result = await client.call_tool("retrieve_context", {**question, "max_tokens": budget})
            found = payload(result)
            assert seeded.container.tokenizer.count(result.content[0].text) <= budget
            shown = {c["id"]: " ".join(c["content"].split()) for c in found["chunks"]}
            for item in (*found["entities"], *found["relations"]):
                sources = [shown[i] for i in item["source_chunk_ids"] if i in shown]
                if len(sources) < len(set(item["source_chunk_ids"])):  # a chunk it comes from is not shown:
                    cut_chunk_items += 1  # its description still says what that chunk said
                    assert item["description"], (budget, item)
                for sentence in item["description"].split(". "):  # and a shown chunk's sentences are not repeated
                    assert not any(sentence.rstrip(".") + "." in text for text in sources if len(sentence) > 30)
            assert {r["reference_id"] for r in found["references"]} == {c["reference_id"] for c in found["chunks"]}
    assert cut_chunk_items > 0  # some budget kept graph items whose chunks it cut


async def test_every_result_its_truncation_note_included_is_within_max_tokens(seeded):
    await _add(seeded, "beta", PORTS)
    tokenizer = seeded.container.tokenizer
    calls = [
        ("search_entities", {"project_id": "beta", "limit": 500}),
        ("list_documents", {"project_id": "beta"}),
        ("get_neighbours", {"project_id": "beta", "name": "Vela Port", "depth": 2}),
        ("retrieve_context", {"project_id": "beta", "question": "Which captains sailed from Vela Port?"}),
    ]
    cut = 0
    async with mcp_client(seeded.app) as client:
        for name, arguments in calls:
            for budget in (200, 250, 300, 400, 600, 900):
                result = await client.call_tool(name, {**arguments, "max_tokens": budget})
                cut += payload(result)["truncated"]
                assert tokenizer.count(result.content[0].text) <= budget, (name, budget)
    assert cut >= 12  # most of them had to be cut, and say so
