"""Keys and scopes as the REST API has them, MCP_READ_ONLY, and a long ingest's progress over a real server."""

from __future__ import annotations

import os

import pytest
from mcp import MCPError

from tests.mcp.conftest import ALPHA_KEY, API_KEYS, error_text, mcp_client, payload
from tests.support.live_server import live_app

# One call of each tool that takes a project, aimed at project beta.
ON_BETA = [
    ("query", {"question": "Who visited Rome?"}),
    ("retrieve_context", {"question": "Who visited Rome?"}),
    ("search_entities", {}),
    ("get_entity", {"name": "Rome"}),
    ("get_neighbours", {"name": "Rome"}),
    ("find_path", {"source": "Rome", "target": "Italy"}),
    ("list_documents", {}),
    ("get_document_chunks", {"document_id": "doc-1"}),
    ("document_status", {"document_id": "doc-1"}),
    ("ingest_text", {"text": "Ines Korr lives in Oslo."}),
]


@pytest.mark.parametrize("project", ["beta", "default"])
async def test_a_scoped_key_is_refused_on_other_projects(seeded, fake_llm, project):
    calls_before = len(fake_llm.calls)  # the seeding's
    async with mcp_client(seeded.app, ALPHA_KEY) as client:
        for tool, arguments in ON_BETA:
            result = await client.call_tool(tool, {**arguments, "project_id": project})
            assert error_text(result) == f"This API key may not access project '{project}' (project_forbidden)", tool
        with pytest.raises(MCPError, match="project_forbidden"):
            await client.read_resource(f"lightrag://projects/{project}/entities/Rome")
    assert len(fake_llm.calls) == calls_before  # refused before any work
    listed = await seeded.http.get("/documents", params={"project_id": project})
    assert listed.json()["total"] == 0  # nothing was ingested


async def test_a_scoped_key_works_on_its_project_and_sees_only_it(seeded):
    async with mcp_client(seeded.app, ALPHA_KEY) as client:
        projects = payload(await client.call_tool("list_projects", {}))
        entity = payload(await client.call_tool("get_entity", {"name": "Rome", "project_id": "alpha"}))
        resource = await client.read_resource("lightrag://projects/alpha/entities/Rome")
    assert [p["id"] for p in projects["projects"]] == ["alpha"]
    assert entity["name"] == "Rome" and '"name": "Rome"' in resource.contents[0].text


async def test_read_only_mode_offers_and_runs_no_write_tool(start_app, make_settings):
    app_client = await start_app(make_settings(api_keys=API_KEYS, mcp_read_only=True))
    async with mcp_client(app_client.app) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        refused = await client.call_tool("ingest_text", {"text": "Ines Korr lives in Oslo."})
        listed = payload(await client.call_tool("list_documents", {}))
    assert "ingest_text" not in names and {"query", "get_entity", "list_documents"} <= names
    assert "Unknown tool: ingest_text" in error_text(refused)
    assert listed["total"] == 0


@pytest.mark.slow  # a uvicorn server of its own
def test_a_long_ingest_reports_progress_over_a_real_server(pg_cluster, fake_llm):
    """Over a loopback socket: the progress notifications stream on the tool call's response as the worker
    extracts the chunks, and the result comes when the document is processed."""
    import anyio

    fake_llm.latency = 0.1  # each extraction call takes a while, so the document is seen part done
    text = " ".join(f"Sentence {i} says Vela Port trades with Orin Bay." for i in range(300))
    settings = {"api_keys": API_KEYS, "chunk_size": 200, "chunk_overlap_size": 0, "progress_write_interval": 0.05}
    with live_app(pg_cluster, fake_llm, f"mcp_progress_{os.getpid()}", **settings) as server:
        reports: list[tuple[float, float | None, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            reports.append((progress, total, message))

        async def ingest() -> dict:
            async with mcp_client(None, url=server.url) as client:
                result = await client.call_tool(
                    "ingest_text", {"text": text, "wait": True}, progress_callback=on_progress
                )
                return payload(result)

        answer = anyio.run(ingest)
    assert answer["status"] == "processed" and answer["done"] is True
    chunks = answer["document"]["chunks_count"]
    assert chunks > 3
    progress = [p for p, _, _ in reports]
    assert progress == sorted(progress) and reports[-1][:2] == (chunks, chunks)
    assert any(message and message.startswith("processing") for _, _, message in reports)
    assert reports[-1][2] == "processed"  # not "processed (embedding)": a finished document's stage is its last
