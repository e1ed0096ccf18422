"""`query` lists only the documents the answer cites, and notes the sentences the sources do not support."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import LiveService, assert_ok
from tests.support.fakes.cited_answers import chunk_with, citing
from tests.support.fakes.openai_server import FakeOpenAI

DOCS = {
    "alice.txt": "Alice Walker founded Acme Robotics in Lyon. Alice Walker hired Bruno Costa.\n",
    "bruno.txt": "Bruno Costa builds robot arms for Acme Robotics. Bruno Costa lives in Porto.\n",
}


@pytest.fixture
def two_documents(live_service: LiveService, project: str, tmp_path: Path) -> str:
    for name, text in DOCS.items():
        (tmp_path / name).write_text(text)
    files = [str(tmp_path / name) for name in DOCS]
    assert_ok(live_service.run("ingest", *files, "--poll-interval", "0.05", project=project))
    return project


def _answer(chunks: list[dict]) -> str:
    alice = chunk_with(chunks, "founded")["id"]
    return (
        f"Alice Walker founded **Acme Robotics** in Lyon [{alice}]. Acme Robotics employs 900 people in Oslo.\n\n"
        "### References\n- [1] alice.txt\n- [2] bruno.txt\n"
    )


def _context_files(live_service: LiveService, project: str) -> set[str]:
    body = {"project_id": project, "query": "Who founded Acme Robotics?", "mode": "naive", "only_need_context": True}
    with live_service.http() as http:
        return {r["file_path"] for r in http.post("/query", json=body).json()["references"]}


@pytest.mark.parametrize("stream", [False, True])
def test_query_lists_the_cited_documents_and_notes_unsupported_sentences(
    live_service: LiveService, two_documents: str, fake_llm: FakeOpenAI, stream: bool
):
    assert _context_files(live_service, two_documents) == set(DOCS)  # both in the context, one cited
    fake_llm.handlers["query"] = citing(_answer)
    args = ["query", "Who founded Acme Robotics?", "--mode", "naive"] + (["--stream"] if stream else [])
    result = live_service.run(*args, project=two_documents)

    assert_ok(result)
    references = result.stdout.rsplit("References:", 1)[1]
    assert "alice.txt" in references and "bruno.txt" not in references
    assert "Note: 1 sentence not supported by the sources:" in references
    assert "- Acme Robotics employs 900 people in Oslo." in references


def test_an_answer_without_claims_lists_every_context_document(
    live_service: LiveService, two_documents: str, fake_llm: FakeOpenAI
):
    fake_llm.handlers["query"] = lambda messages: "###"  # nothing to check: no claims
    result = live_service.run("query", "Who founded Acme Robotics?", "--mode", "naive", project=two_documents)

    assert_ok(result)
    references = result.stdout.split("References:", 1)[1]
    assert "alice.txt" in references and "bruno.txt" in references and "not supported" not in references
