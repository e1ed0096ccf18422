"""Every MCP tool through the SDK's client over streamable HTTP: typed schemas, answers from the native
services, token usage in `_meta`, bad arguments as tool errors, and the result budget."""

from __future__ import annotations

import httpx
import pytest
from mcp import MCPError

from app.main import create_app
from tests.mcp.conftest import ADMIN_KEY, TEXT, error_text, mcp_client, payload

READ_TOOLS = {
    "query",
    "retrieve_context",
    "search_entities",
    "get_entity",
    "get_neighbours",
    "find_path",
    "list_documents",
    "get_document_chunks",
    "document_status",
    "list_projects",
}


async def test_tools_are_listed_with_typed_schemas_and_a_budget(seeded):
    async with mcp_client(seeded.app) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == READ_TOOLS | {"ingest_text"}
    for tool in tools.values():
        assert tool.description and len(tool.description) < 300
        properties = tool.input_schema["properties"]
        assert properties["max_tokens"]["type"] == "integer" and properties["max_tokens"]["default"] >= 1000
        if tool.name != "list_projects":
            assert properties["project_id"]["default"] == "default"
    assert tools["query"].input_schema["required"] == ["question"]
    assert set(tools["query"].input_schema["properties"]["mode"]["enum"]) >= {"local", "global", "mix", "naive"}
    assert tools["ingest_text"].annotations.read_only_hint is False
    assert tools["get_entity"].annotations.read_only_hint is True


async def test_query_answers_with_references_and_reports_usage(seeded, fake_llm):
    async with mcp_client(seeded.app) as client:
        result = await client.call_tool("query", {"question": "Where did Carol Hale go?", "project_id": "alpha"})
        context = await client.call_tool(
            "retrieve_context", {"question": "Where did Carol Hale go?", "project_id": "alpha", "mode": "local"}
        )
    answer = payload(result)
    assert answer["answer"] and answer["mode"] == "mix" and answer["truncated"] is False
    assert [r["document_id"] for r in answer["references"]] == ["doc-1"]
    usage = result.meta["usage"]
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0 and usage["llm_calls"] >= 1
    found = payload(context)
    assert "Carol Hale" in {e["name"] for e in found["entities"]}
    assert found["chunks"] and found["chunks"][0]["document_id"] == "doc-1"


async def test_graph_tools(seeded):
    async with mcp_client(seeded.app) as client:
        search = payload(await client.call_tool("search_entities", {"name_contains": "o", "project_id": "alpha"}))
        entity = payload(await client.call_tool("get_entity", {"name": "rome", "project_id": "alpha"}))
        around = payload(await client.call_tool("get_neighbours", {"name": "Rome", "project_id": "alpha"}))
        path = payload(
            await client.call_tool("find_path", {"source": "Carol Hale", "target": "Italy", "project_id": "alpha"})
        )
        apart = payload(
            await client.call_tool("find_path", {"source": "Carol Hale", "target": "Milan", "project_id": "alpha"})
        )
        too_far = payload(
            await client.call_tool(
                "find_path", {"source": "Carol Hale", "target": "Italy", "project_id": "alpha", "max_hops": 1}
            )
        )
    assert {"Rome", "Orbis Labs"} <= {e["name"] for e in search["entities"]}
    assert entity["name"] == "Rome" and entity["source_chunks"][0]["document_id"] == "doc-1"
    assert {(r["source"], r["target"]) for r in entity["relations"]} == {("Carol Hale", "Rome"), ("Italy", "Rome")}
    assert {n["id"] for n in around["nodes"]} == {"Rome", "Carol Hale", "Italy"} and len(around["edges"]) == 2
    assert [e["name"] for e in path["entities"]] == ["Carol Hale", "Rome", "Italy"] and path["hops"] == 2
    assert apart["found"] is False and apart["reason"] == "the two entities are not connected"
    assert too_far["found"] is False and too_far["reason"] == "no chain of at most 1 relations found"


async def test_document_tools_and_ingest(seeded):
    async with mcp_client(seeded.app) as client:
        listed = payload(await client.call_tool("list_documents", {"project_id": "alpha"}))
        chunks = payload(await client.call_tool("get_document_chunks", {"document_id": "doc-1", "project_id": "alpha"}))
        status = payload(await client.call_tool("document_status", {"document_id": "doc-1", "project_id": "alpha"}))
        added = payload(
            await client.call_tool("ingest_text", {"text": "Ines Korr lives in Oslo.", "project_id": "beta"})
        )
        again = payload(
            await client.call_tool("ingest_text", {"text": "Ines Korr lives in Oslo.", "project_id": "beta"})
        )
        projects = payload(await client.call_tool("list_projects", {}))
    assert [d["id"] for d in listed["documents"]] == ["doc-1"] and listed["counts"]["processed"] == 1
    assert "".join(c["content"] for c in chunks["chunks"]) == TEXT and chunks["total_chunks"] == 1
    assert status["status"] == "processed" and status["entities_count"] >= 5
    assert added["status"] == "pending" and added["id"].startswith("doc-")
    assert again == {**added, "status": "duplicate"}
    assert {"alpha", "beta", "default"} <= {p["id"] for p in projects["projects"]}
    response = await seeded.http.get(f"/documents/{added['id']}", params={"project_id": "beta"})
    assert response.status_code == 200  # stored where the tool said


async def test_resources_are_addressable_by_uri(seeded):
    async with mcp_client(seeded.app) as client:
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        entity = await client.read_resource("lightrag://projects/alpha/entities/Carol%20Hale")
        document = await client.read_resource("lightrag://projects/alpha/documents/doc-1")
        project = await client.read_resource("lightrag://projects/alpha")
        with pytest.raises(MCPError, match="entity_not_found"):
            await client.read_resource("lightrag://projects/alpha/entities/Nobody")
    assert templates == {
        "lightrag://projects/{project_id}",
        "lightrag://projects/{project_id}/documents/{document_id}",
        "lightrag://projects/{project_id}/entities/{name}",
    }
    assert '"name": "Carol Hale"' in entity.contents[0].text and entity.contents[0].mime_type == "application/json"
    assert TEXT in document.contents[0].text
    assert '"id": "alpha"' in project.contents[0].text


@pytest.mark.parametrize(
    "tool,arguments,expected",
    [
        ("get_entity", {"name": 5, "project_id": "alpha"}, "valid string"),
        ("get_entity", {"project_id": "alpha"}, "name"),
        ("query", {"question": "x", "mode": "sideways"}, "mode"),
        ("query", {"question": "x", "max_tokens": 10}, "max_tokens"),
        ("list_documents", {"project_id": "Not A Project!"}, "project_id"),
        ("get_entity", {"name": "Nobody", "project_id": "alpha"}, "entity_not_found"),
        ("document_status", {"document_id": "doc-missing", "project_id": "alpha"}, "document_not_found"),
        ("search_entities", {"project_id": "ghost"}, "project_not_found"),
        ("query", {"question": "x" * 70_000, "project_id": "alpha"}, "query_limits"),
        ("ingest_text", {"text": "   ", "project_id": "alpha"}, "invalid_documents"),
        ("no_such_tool", {}, "no_such_tool"),
    ],
)
async def test_bad_arguments_are_tool_errors_not_transport_failures(seeded, tool, arguments, expected):
    async with mcp_client(seeded.app) as client:
        result = await client.call_tool(tool, arguments)
        assert expected in error_text(result)
        assert payload(await client.call_tool("list_documents", {"project_id": "alpha"}))["total"] == 1


async def test_results_are_cut_to_the_budget_and_say_so(seeded):
    long_text = " ".join(f"Sentence {i} mentions Vela Port and its harbour master." for i in range(400))
    async with mcp_client(seeded.app) as client:
        added = payload(await client.call_tool("ingest_text", {"text": long_text, "project_id": "beta", "wait": True}))
        assert added["status"] == "processed", added
        full = payload(
            await client.call_tool("get_document_chunks", {"document_id": added["id"], "project_id": "beta"})
        )
        cut = await client.call_tool(
            "get_document_chunks", {"document_id": added["id"], "project_id": "beta", "max_tokens": 3000}
        )
    tokenizer = seeded.container.tokenizer
    assert full["truncated"] is False and full["total_chunks"] == len(full["chunks"]) >= 3
    small = payload(cut)
    assert small["truncated"] is True and 0 < len(small["chunks"]) < full["total_chunks"]
    assert f"kept {len(small['chunks'])} of {full['total_chunks']} chunks" in small["truncation"]
    assert tokenizer.count(cut.content[0].text) <= 3000
    assert small["chunks"] == full["chunks"][: len(small["chunks"])]  # the first chunks, whole


async def test_tool_calls_are_counted_in_metrics(seeded):
    async with mcp_client(seeded.app) as client:
        await client.call_tool("list_projects", {})
        await client.call_tool("get_entity", {"name": "Nobody", "project_id": "alpha"})
    metrics = (await seeded.http.get("/metrics")).text
    assert 'mcp_tool_calls_total{outcome="ok",tool="list_projects"}' in metrics
    assert 'mcp_tool_calls_total{outcome="error",tool="get_entity"}' in metrics


async def test_mcp_is_outside_the_openapi_document(settings):
    schema = create_app(settings).openapi()
    assert not [path for path in schema["paths"] if path.startswith("/mcp")]


async def test_a_request_without_a_valid_key_is_refused_before_mcp(seeded):
    transport = httpx.ASGITransport(app=seeded.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        headers = {"Accept": "application/json, text/event-stream"}
        missing = await http.post("/mcp", json=body, headers=headers)
        wrong = await http.post("/mcp", json=body, headers={**headers, "Authorization": "Bearer nope"})
    assert missing.status_code == 401 and missing.json()["code"] == "missing_api_key"
    assert wrong.status_code == 401 and wrong.json()["code"] == "invalid_api_key"
    assert ADMIN_KEY not in wrong.text
