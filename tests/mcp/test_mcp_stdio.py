"""`lightrag-service mcp`: the SDK's client starts it as a subprocess and talks over its stdin/stdout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.mcp.conftest import ADMIN_KEY, ALPHA_KEY, API_KEYS, error_text, payload
from tests.support.database import TEST_DIM

pytestmark = pytest.mark.slow  # a service process of its own

ROOT = Path(__file__).resolve().parents[2]


def _environment(database_url: str, llm_url: str, key: str) -> dict[str, str]:
    return {
        **os.environ,  # ENV_FILE= from the test session: no developer's .env
        "DATABASE_URL": database_url,
        "LLM_BASE_URL": llm_url,
        "LLM_MODEL": "fake-llm",
        "LLM_API_KEY": "k",
        "EMBEDDING_MODEL": "fake-embedding",
        "EMBEDDING_DIM": str(TEST_DIM),
        "API_KEYS": ",".join(API_KEYS),
        "LIGHTRAG_API_KEY": key,
        "WORKER_ENABLED": "false",  # the test's app runs the worker
        "LOG_LEVEL": "WARNING",
    }


def _server(database_url: str, llm_url: str, key: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "app.cli", "mcp"],
        env=_environment(database_url, llm_url, key),
        cwd=str(ROOT),
    )


async def test_stdio_serves_the_tools_with_the_keys_scope(seeded, database_url, fake_llm):
    async with Client(_server(database_url, fake_llm.url, ALPHA_KEY)) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        entity = payload(await client.call_tool("get_entity", {"name": "Rome", "project_id": "alpha"}))
        answer = await client.call_tool("query", {"question": "Where did Carol Hale go?", "project_id": "alpha"})
        refused = await client.call_tool("list_documents", {"project_id": "beta"})
        bad = await client.call_tool("get_neighbours", {"name": "Rome", "project_id": "alpha", "depth": 9})
        resource = await client.read_resource("lightrag://projects/alpha/documents/doc-1")
    assert {"query", "ingest_text", "find_path"} <= names
    assert entity["name"] == "Rome"
    assert payload(answer)["references"][0]["document_id"] == "doc-1" and answer.meta["usage"]["input_tokens"] > 0
    assert "project_forbidden" in error_text(refused)
    assert "depth" in error_text(bad)
    assert "Carol Hale visited Rome." in resource.contents[0].text


def test_stdio_refuses_to_start_without_a_known_key():
    unreachable = "postgresql://nobody@127.0.0.1:9/none"  # refused before any connection is tried
    for key, reason in (("", "give one of its keys"), ("not-a-key", "not one of API_KEYS")):
        done = subprocess.run(
            [sys.executable, "-m", "app.cli", "mcp"],
            env=_environment(unreachable, "http://127.0.0.1:9/v1", key),
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2 and done.stdout == ""
        assert reason in done.stderr and ADMIN_KEY not in done.stderr
