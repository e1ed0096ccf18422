"""Every final state ends `ingest`'s wait; `cancel` and `retry`; `documents --json`; file names for ids."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx

from tests.cli.conftest import API_KEY, LiveService, assert_ok
from tests.support.fakes.openai_server import FakeOpenAI, default_extract


def _listed(live_service: LiveService, project: str) -> dict[str, dict]:
    with live_service.http() as http:
        page = http.get("/documents", params={"project_id": project}).json()
    return {d["id"]: d for d in page["documents"]}


def _cancel_while_extracting(live_service: LiveService, project: str):
    """An extraction handler that cancels the project's processing documents, then answers."""

    async def handler(messages: list[dict]) -> str:
        headers = {"Authorization": f"Bearer {API_KEY}"}
        async with httpx.AsyncClient(base_url=live_service.url, headers=headers, timeout=30) as http:
            page = (await http.get("/documents", params={"project_id": project, "status": "processing"})).json()
            for doc in page["documents"]:
                await http.post(f"/documents/{doc['id']}/cancel", json={"project_id": project})
        return default_extract(messages)

    return handler


def test_ingest_ends_its_wait_on_a_cancelled_document_and_reports_it(
    live_service: LiveService, project: str, tmp_path: Path, fake_llm: FakeOpenAI
):
    fake_llm.handlers["extract"] = _cancel_while_extracting(live_service, project)
    (tmp_path / "stopped.txt").write_text("Ivy Stone built Quartz Labs in Oslo.\n")

    result = live_service.run("ingest", str(tmp_path), "--poll-interval", "0.05", "--max-wait", "20", project=project)

    assert result.exit_code == 1, result.output
    assert "still queued" not in result.output and "queued" not in result.stdout
    assert "│ cancelled " in result.stdout.split("Summary", 1)[1]
    reported = result.stdout.split("Not processed", 1)[1]
    assert "stopped.txt" in reported and "cancelled" in reported
    [doc] = _listed(live_service, project).values()
    assert doc["status"] == "cancelled"


def _settled(live_service: LiveService, project: str) -> dict[str, str]:
    """File name -> status, once no document is pending or processing any more (30 s at most)."""
    deadline = time.monotonic() + 30
    while True:
        statuses = {d["file_path"]: d["status"] for d in _listed(live_service, project).values()}
        if not {"pending", "processing"} & set(statuses.values()) or time.monotonic() > deadline:
            return statuses
        time.sleep(0.05)


def test_cancel_and_retry_by_id_or_file_name(
    live_service: LiveService, project: str, tmp_path: Path, fake_llm: FakeOpenAI
):
    fake_llm.latency = 60  # no extraction ends before the cancel: a worker's document stops while extracting
    (tmp_path / "one.txt").write_text("Jack Reed sailed to Malta.\n")
    (tmp_path / "two.txt").write_text("Kate Bell flew to Quito.\n")
    assert_ok(live_service.run("ingest", str(tmp_path), "--no-wait", project=project))
    ids = {d["file_path"]: d_id for d_id, d in _listed(live_service, project).items()}

    cancelled = live_service.run("cancel", "one.txt", ids["two.txt"], project=project)
    assert_ok(cancelled)
    assert f"{ids['one.txt']} (one.txt)" in cancelled.stdout and ids["two.txt"] in cancelled.stdout
    assert _settled(live_service, project) == {"one.txt": "cancelled", "two.txt": "cancelled"}

    fake_llm.latency = 0
    retried = live_service.run("retry", "one.txt", ids["two.txt"], project=project)
    assert_ok(retried)
    assert f"retried {ids['one.txt']} (one.txt): pending" in retried.stdout

    not_failed = live_service.run("retry", "one.txt", project=project)
    assert not_failed.exit_code == 1 and "document_not_failed" in not_failed.stderr
    missing = live_service.run("cancel", "nothing.txt", project=project)
    assert missing.exit_code == 1
    assert "nothing.txt: HTTP 404 document_not_found" in missing.stderr


def test_retry_of_every_failed_document(live_service: LiveService, project: str, tmp_path: Path, fake_llm: FakeOpenAI):
    def crash(messages: list[dict]) -> str:
        raise RuntimeError("model crashed")

    fake_llm.handlers["extract"] = crash
    (tmp_path / "bad.txt").write_text("Liam Frost met Mona Vale.\n")
    assert live_service.run("ingest", str(tmp_path), "--poll-interval", "0.05", project=project).exit_code == 1
    fake_llm.handlers.clear()

    result = live_service.run("retry", "--all-failed", project=project)

    assert_ok(result)
    assert "retried 1 failed document" in result.stdout
    assert [d["status"] for d in _listed(live_service, project).values()] != ["failed"]


def test_documents_json_is_the_service_page(live_service: LiveService, project: str, tmp_path: Path):
    (tmp_path / "one.txt").write_text("Nora Quinn painted Lisbon.\n")
    assert_ok(live_service.run("ingest", str(tmp_path), "--poll-interval", "0.05", project=project))

    result = live_service.run("documents", "--json", project=project)

    assert_ok(result)
    page = json.loads(result.stdout)
    assert page["total"] == 1 and page["documents"][0]["file_path"] == "one.txt"
    assert page["counts"]["processed"] == 1


def test_a_file_name_of_several_documents_is_refused_unless_all_are_meant(
    live_service: LiveService, project: str, tmp_path: Path
):
    for folder, text in (("a", "Omar Pike rode to Lima.\n"), ("b", "Paula West rode to Cusco.\n")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "same.txt").write_text(text)
        assert_ok(live_service.run("ingest", str(tmp_path / folder), "--poll-interval", "0.05", project=project))
    ids = sorted(_listed(live_service, project))

    refused = live_service.run("delete", "same.txt", project=project)

    assert refused.exit_code == 2
    assert all(doc_id in refused.stderr for doc_id in ids)
    assert refused.stderr.strip().splitlines()[-1] == (
        "error: 'same.txt' names 2 documents (listed above): give their ids, or pass --all-matching"
    )
    assert sorted(_listed(live_service, project)) == ids  # nothing deleted

    both = live_service.run("delete", "same.txt", "--all-matching", project=project)
    assert_ok(both)
    assert "deleted 2 documents" in both.stdout
    assert _listed(live_service, project) == {}
