"""`query`, `status`, `documents`, `delete`, `export`, `projects` and `serve` against the live service."""

from __future__ import annotations

import os
from pathlib import Path

import openpyxl
import pytest

from tests.cli.conftest import LiveService, assert_ok

TEXT = "Alice Walker founded Acme Robotics in Lyon. Alice Walker hired Bruno Costa.\n"


@pytest.fixture
def ingested(live_service: LiveService, project: str, tmp_path: Path) -> str:
    """The project, holding one processed document (alice.txt)."""
    (tmp_path / "alice.txt").write_text(TEXT)
    assert_ok(live_service.run("ingest", str(tmp_path / "alice.txt"), "--poll-interval", "0.05", project=project))
    return project


def _document_id(live_service: LiveService, project: str) -> str:
    with live_service.http() as http:
        [doc] = http.get("/documents", params={"project_id": project}).json()["documents"]
    return doc["id"]


def test_query_prints_the_answer_and_its_references(live_service: LiveService, ingested: str):
    result = live_service.run("query", "Who founded Acme Robotics?", "--mode", "mix", project=ingested)

    assert_ok(result)
    assert "Answer to" in result.stdout
    assert "References:" in result.stdout and "alice.txt" in result.stdout.split("References:", 1)[1]


def test_query_stream_prints_the_answer_as_it_arrives(live_service: LiveService, ingested: str):
    result = live_service.run("query", "Who founded Acme Robotics?", "--stream", "--mode", "local", project=ingested)

    assert_ok(result)
    answer, references = result.stdout.split("References:", 1)
    assert "Answer to" in answer and "alice.txt" in references


@pytest.mark.parametrize("stream", [False, True])
def test_query_context_only_prints_the_retrieved_context(live_service: LiveService, ingested: str, stream: bool):
    args = ["query", "Who is Alice Walker?", "--context-only"] + (["--stream"] if stream else [])
    result = live_service.run(*args, project=ingested)

    assert_ok(result)
    assert "Answer to" not in result.stdout
    assert "Entities (" in result.stdout and "Alice Walker" in result.stdout
    assert "Chunks (" in result.stdout and "alice.txt" in result.stdout


def test_query_json_and_invalid_mode(live_service: LiveService, ingested: str):
    result = live_service.run("query", "Who is Alice Walker?", "--json", "--mode", "naive", project=ingested)
    assert_ok(result)
    assert '"mode": "naive"' in result.stdout

    wrong = live_service.run("query", "x", "--mode", "sideways", project=ingested)
    assert wrong.exit_code == 2 and "sideways" in wrong.stderr


def test_status_shows_health_and_pipeline(live_service: LiveService, ingested: str):
    result = live_service.run("status", project=ingested)

    assert_ok(result)
    assert "database" in result.stdout and "ok" in result.stdout
    assert "fake-llm (configured)" in result.stdout
    assert f"Pipeline of project {ingested}" in result.stdout and "processed 1" in result.stdout


def test_documents_lists_the_project_documents(live_service: LiveService, ingested: str):
    doc_id = _document_id(live_service, ingested)
    result = live_service.run("documents", project=ingested)

    assert_ok(result)
    assert doc_id in result.stdout and "alice.txt" in result.stdout and "processed" in result.stdout
    assert "1 shown of 1" in result.stdout
    header = next(line for line in result.stdout.splitlines() if "Status" in line)
    assert header.index("File") < header.index("Status") < header.index("Document")  # the name comes first

    failed_only = live_service.run("documents", "--status", "failed", project=ingested)
    assert_ok(failed_only)
    assert doc_id not in failed_only.stdout and "0 shown of 0" in failed_only.stdout


def test_documents_on_a_narrow_terminal_keep_each_id_whole(live_service: LiveService, ingested: str):
    """An id folded over two lines pastes into `delete` as no document: on 80 columns the counts and the time are
    left out instead, and the id and the name stay on one line each."""
    doc_id = _document_id(live_service, ingested)
    narrow = live_service.run("documents", project=ingested, columns=80)

    assert_ok(narrow)
    lines = narrow.stdout.splitlines()
    assert max(map(len, lines)) <= 80
    row = next(line for line in lines if doc_id in line)
    assert "alice.txt" in row and "processed" in row
    assert "Entities" not in narrow.stdout and "Updated" not in narrow.stdout
    wide = live_service.run("documents", project=ingested, columns=130)
    assert "Entities" in wide.stdout and "Updated" in wide.stdout and doc_id in wide.stdout


def test_delete_removes_documents_and_reports_unknown_ones(live_service: LiveService, ingested: str):
    doc_id = _document_id(live_service, ingested)
    result = live_service.run("delete", doc_id, "doc-unknown", project=ingested)

    assert result.exit_code == 1
    assert f"deleted {doc_id}:" in result.stdout
    assert "error: doc-unknown: HTTP 404 document_not_found: Document 'doc-unknown' not found" in result.stderr
    with live_service.http() as http:
        assert http.get(f"/documents/{doc_id}", params={"project_id": ingested}).status_code == 404


def test_delete_of_several_documents_is_one_batch(live_service: LiveService, project: str, tmp_path: Path):
    """Several ids go in one request: one plan and one rebuild, so the entity they share is rebuilt once."""
    for name in ("one", "two", "three"):
        (tmp_path / f"{name}.txt").write_text(f"{TEXT}Alice Walker wrote chapter {name}.\n")
    assert_ok(live_service.run("ingest", str(tmp_path), "--poll-interval", "0.05", project=project))
    with live_service.http() as http:
        listed = http.get("/documents", params={"project_id": project}).json()["documents"]
    ids = {d["file_path"]: d["id"] for d in listed}
    gone, kept = [ids["one.txt"], ids["two.txt"]], ids["three.txt"]

    result = live_service.run("delete", *gone, project=project)

    assert_ok(result)
    [line] = result.stdout.splitlines()  # one report for the batch, not one per document
    assert line.startswith(f"deleted 2 documents ({gone[0]}, {gone[1]}): ") and line.endswith("rebuilt (each once)")
    with live_service.http() as http:
        for doc_id in gone:
            assert http.get(f"/documents/{doc_id}", params={"project_id": project}).status_code == 404
        assert http.get(f"/documents/{kept}", params={"project_id": project}).json()["status"] == "processed"
        alice = http.get("/entities/Alice Walker", params={"project_id": project}).json()
        assert alice["source_ids"] and all(kept in chunk for chunk in alice["source_ids"])


def test_export_streams_the_graph_to_a_file(live_service: LiveService, ingested: str, tmp_path: Path):
    (tmp_path / "out").mkdir()
    target = tmp_path / "out" / "graph.xlsx"
    result = live_service.run("export", "--format", "xlsx", "-o", str(target), project=ingested)

    assert_ok(result)
    assert f"wrote {target}" in result.stdout
    workbook = openpyxl.load_workbook(target, read_only=True)
    cells = {str(cell) for sheet in workbook.worksheets for row in sheet.iter_rows(values_only=True) for cell in row}
    assert "Alice Walker" in cells
    assert os.listdir(tmp_path / "out") == ["graph.xlsx"]  # no partial file left behind


def test_export_of_an_unknown_project_writes_nothing(live_service: LiveService, tmp_path: Path):
    target = tmp_path / "graph.json"
    result = live_service.run("export", "--format", "json", "-o", str(target), project="missing")

    assert result.exit_code == 1
    assert result.stderr.strip() == "error: HTTP 404 project_not_found: Project 'missing' not found"
    assert os.listdir(tmp_path) == []


def test_projects_lists_and_creates(live_service: LiveService, ingested: str):
    listed = live_service.run("projects")
    assert_ok(listed)
    assert "default" in listed.stdout and ingested in listed.stdout

    created = live_service.run("projects", "create", "cli-created", "--name", "From the CLI")
    assert_ok(created)
    assert "cli-created" in created.stdout and "From the CLI" in created.stdout
    assert "cli-created" in live_service.run("projects").stdout

    again = live_service.run("projects", "create", "cli-created")
    assert again.exit_code == 1
    assert again.stderr.startswith("error: HTTP 409") and len(again.stderr.strip().splitlines()) == 1


def test_projects_on_a_narrow_terminal_leave_the_graph_counts_out(live_service: LiveService, ingested: str):
    narrow = live_service.run("projects", columns=80)
    assert_ok(narrow)
    lines = narrow.stdout.splitlines()
    assert max(map(len, lines)) <= 80 and "Relations" not in narrow.stdout
    header = next(line for line in lines if "Name" in line)
    assert all(word in header for word in ("Project", "Documents", "Created"))  # no header folded to a few letters
    assert any(ingested in line for line in lines)
    assert "Relations" in live_service.run("projects", columns=100).stdout


def test_serve_runs_the_api_entry_point_with_the_given_options(live_service: LiveService, monkeypatch):
    import app.__main__

    calls = []
    monkeypatch.setattr(app.__main__, "main", lambda: calls.append((os.environ["HOST"], os.environ["PORT"])))
    for name in ("HOST", "PORT", "WORKERS"):
        monkeypatch.setenv(name, "")  # restored after the test, whatever `serve` sets
    result = live_service.run("serve", "--host", "127.0.0.2", "--port", "9700")

    assert_ok(result)
    assert calls == [("127.0.0.2", "9700")]


def test_documents_in_flight_fit_a_narrow_terminal():
    """Two whole ISO timestamps took every column of 80 but theirs; the times of day (UTC) leave room for the rest."""
    from rich.console import Console

    from app.cli.documents import in_flight_table

    doc = {
        "id": "doc-1",
        "file_path": "report.pdf",
        "stage": "extracting",
        "claimed_by": "host:41:a1b2c3",
        "started_at": "2026-11-28T11:19:34.123456+02:00",
        "heartbeat_at": "2026-11-28T09:19:36Z",
        "attempts": 1,
    }
    console = Console(width=80, record=True)
    console.print(in_flight_table([doc]))
    text = console.export_text()
    assert max(map(len, text.splitlines())) <= 80
    row = next(line for line in text.splitlines() if "09:19:34" in line)
    assert "report.pdf" in row and "extracting" in row and "09:19:36" in row
