"""`ingest_text` under an existing document's id, as POST /documents takes it: other text updates the document
(by chunk diff, followed to the end with `wait`), the same text is a duplicate, and a refused update is a tool
error with its code, never new text silently dropped."""

from __future__ import annotations

from tests.mcp.conftest import error_text, mcp_client, payload

NEW_TEXT = "Carol Hale visited Rome. Rome is in Italy. Dario Venn founded Orbis Labs in Turin with Ada Brill."


async def test_other_text_under_a_documents_id_updates_it(seeded):
    async with mcp_client(seeded.app) as client:
        result = await client.call_tool(
            "ingest_text", {"text": NEW_TEXT, "document_id": "doc-1", "project_id": "alpha", "wait": True}
        )
        updated = payload(result)
        again = payload(
            await client.call_tool("ingest_text", {"text": NEW_TEXT, "document_id": "doc-1", "project_id": "alpha"})
        )
        added = payload(await client.call_tool("get_entity", {"name": "Ada Brill", "project_id": "alpha"}))
        gone = await client.call_tool("get_entity", {"name": "Milan", "project_id": "alpha"})
        chunks = payload(await client.call_tool("get_document_chunks", {"document_id": "doc-1", "project_id": "alpha"}))
    assert updated["id"] == "doc-1" and updated["update_id"] == "doc-1@v2" and updated["status"] == "processed"
    assert updated["done"] is True and updated["document"]["id"] == "doc-1"
    assert again["status"] == "duplicate" and again["id"] == "doc-1"
    usage = result.meta["usage"]  # what the update's processing spent, its calls as well as its tokens
    assert usage["input_tokens"] > 0 and usage["llm_calls"] >= 1 and usage["embedding_tokens"] > 0
    assert added["source_chunks"][0]["document_id"] == "doc-1"
    assert "entity_not_found" in error_text(gone)  # only the old text named it
    assert [c["content"] for c in chunks["chunks"]] == [NEW_TEXT]


async def test_a_refused_update_is_a_tool_error_with_its_code(seeded):
    update = {"text": NEW_TEXT, "document_id": "doc-1", "project_id": "alpha", "wait": True}
    async with mcp_client(seeded.app) as client:
        assert payload(await client.call_tool("ingest_text", update))["status"] == "processed"
        refused = await client.call_tool(
            "ingest_text", {"text": "Another text.", "document_id": "doc-1@v2", "project_id": "alpha"}
        )
        chunks = payload(await client.call_tool("get_document_chunks", {"document_id": "doc-1", "project_id": "alpha"}))
    assert "update that document (not_a_document)" in error_text(refused)
    assert [c["content"] for c in chunks["chunks"]] == [NEW_TEXT]
