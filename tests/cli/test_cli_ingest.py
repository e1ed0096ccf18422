"""`lightrag-service ingest`: folders of mixed files to completion, the summary, failures with reasons, --no-wait."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import LiveService, assert_ok
from tests.support.fakes.openai_server import FakeOpenAI, chunk_text, default_extract


def _folder(root: Path) -> Path:
    folder = root / "docs"
    (folder / "notes").mkdir(parents=True)
    (folder / "alice.txt").write_text("Alice Walker founded Acme Robotics in Lyon. Alice Walker hired Bruno Costa.\n")
    (folder / "notes" / "bruno.md").write_text("# Bruno\n\nBruno Costa builds Orion Drones with Clara Diaz.\n")
    (folder / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    (folder / ".hidden.txt").write_text("Hidden Person should not be ingested.\n")
    return folder


def _documents(live_service: LiveService, project: str) -> dict[str, dict]:
    with live_service.http() as http:
        page = http.get("/documents", params={"project_id": project}).json()
    return {d["file_path"]: d for d in page["documents"]}


def test_ingest_folder_of_mixed_files_to_completion(live_service: LiveService, project: str, tmp_path: Path):
    result = live_service.run("ingest", str(_folder(tmp_path)), "--poll-interval", "0.05", project=project)

    assert_ok(result)
    assert "skipped" in result.stderr and "photo.png: unsupported file type .png" in result.stderr
    assert "Summary" in result.stdout and "Not processed" not in result.stdout
    assert "processed" in result.stdout and "skipped (unsupported type)" in result.stdout
    assert "Traceback" not in result.output
    docs = _documents(live_service, project)
    assert set(docs) == {"alice.txt", "bruno.md"}
    assert {d["status"] for d in docs.values()} == {"processed"}

    again = live_service.run(
        "ingest", str(tmp_path / "docs"), "--glob", "*.txt", "--poll-interval", "0.05", project=project
    )
    assert_ok(again)
    assert "already stored (duplicate)" in again.stdout and "photo.png" not in again.stderr


def test_ingest_reports_failures_with_their_reasons(
    live_service: LiveService, project: str, tmp_path: Path, fake_llm: FakeOpenAI
):
    def crash_on_kaboom(messages: list[dict]) -> str:
        if "Kaboom" in chunk_text(messages):
            raise RuntimeError("model crashed")
        return default_extract(messages)

    fake_llm.handlers["extract"] = crash_on_kaboom
    (tmp_path / "good.txt").write_text("Dana Scully met Fox Mulder in Washington.\n")
    (tmp_path / "crash.txt").write_text("Kaboom Industries exploded near Springfield.\n")
    (tmp_path / "empty.md").write_text("   \n")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")

    result = live_service.run("ingest", str(tmp_path), "--batch-size", "2", "--poll-interval", "0.05", project=project)

    assert result.exit_code == 1, result.output
    assert "Not processed" in result.stdout
    failures = result.stdout.split("Not processed", 1)[1]
    assert "crash.txt" in failures and "ProviderError" in failures
    assert "empty.md" in failures and "no text could be extracted" in failures
    assert "broken.pdf" in failures and "not a readable PDF" in failures
    assert "good.txt" not in failures
    assert "1 done, 1 failed, 2 rejected" in result.stdout  # the bar's label: a full bar of failures is not success
    assert _documents(live_service, project)["good.txt"]["status"] == "processed"


def test_ingest_no_wait_only_enqueues(live_service: LiveService, project: str, tmp_path: Path):
    (tmp_path / "one.txt").write_text("Erin Brock visited Paris with Frank Ocean.\n")
    (tmp_path / "two.md").write_text("Grace Hopper wrote COBOL manuals.\n")

    result = live_service.run(
        "ingest", str(tmp_path / "one.txt"), str(tmp_path / "two.md"), "--no-wait", project=project
    )

    assert_ok(result)
    assert "Enqueued" in result.stdout and "pending" in result.stdout
    assert "processing" not in result.stdout.split("Enqueued", 1)[0].replace("uploading", "")
    assert set(_documents(live_service, project)) == {"one.txt", "two.md"}


def test_ingest_of_nothing_supported_or_a_missing_path_fails_clearly(
    live_service: LiveService, project: str, tmp_path: Path
):
    (tmp_path / "data.bin").write_bytes(b"\x00\x01")
    nothing = live_service.run("ingest", str(tmp_path), project=project)
    assert nothing.exit_code == 1 and "error: no supported file to ingest" in nothing.stderr

    missing = live_service.run("ingest", str(tmp_path / "nope"), project=project)
    assert missing.exit_code == 2 and "nope: no such file or directory" in missing.stderr

    unknown = live_service.run("ingest", str(_folder(tmp_path / "x")), project="no-such-project")
    assert unknown.exit_code == 1
    assert unknown.stderr.strip().splitlines()[-1] == (
        "error: HTTP 404 project_not_found: Project 'no-such-project' not found"
    )


def test_ingest_of_many_files_follows_them_by_listing_pages(live_service: LiveService, project: str, tmp_path: Path):
    for i in range(14):  # more than polled one by one
        (tmp_path / f"f{i:02}.txt").write_text(f"Person{i} Alpha met Person{i} Beta in City{i}.\n")

    result = live_service.run("ingest", str(tmp_path), "--batch-size", "5", "--poll-interval", "0.05", project=project)

    assert_ok(result)
    docs = _documents(live_service, project)
    assert len(docs) == 14 and {d["status"] for d in docs.values()} == {"processed"}
    assert "│ processed " in result.stdout and "│ 14 " in result.stdout


def test_ingest_max_wait_stops_waiting_with_a_clear_error(
    live_service: LiveService, project: str, tmp_path: Path, fake_llm: FakeOpenAI
):
    fake_llm.latency = 1.5
    (tmp_path / "slow.txt").write_text("Hank Slow waited in Lisbon.\n")

    result = live_service.run("ingest", str(tmp_path), "--poll-interval", "0.05", "--max-wait", "0.2", project=project)

    assert result.exit_code == 1
    assert "queued" in result.stdout
    assert result.stderr.strip().splitlines()[-1] == (
        "error: documents still queued after 0.2 s; follow them with `lightrag-service documents`"
    )


def test_ingest_of_a_changed_file_updates_its_document(live_service: LiveService, project: str, tmp_path: Path):
    note = tmp_path / "keeper.txt"
    note.write_text("Oskar Lind keeps the Skerry light.\n\nMarta Holm rows the mail boat to Skerry.\n")
    assert_ok(live_service.run("ingest", str(note), "--poll-interval", "0.05", project=project))
    first = _documents(live_service, project)["keeper.txt"]
    note.write_text("Oskar Lind keeps the Fjordhead light.\n\nMarta Holm rows the mail boat to Skerry.\n")

    result = live_service.run("ingest", str(note), "--update", "--poll-interval", "0.05", project=project)

    assert_ok(result)
    assert "Not processed" not in result.stdout
    docs = _documents(live_service, project)
    assert list(docs) == ["keeper.txt"]
    assert docs["keeper.txt"]["id"] == first["id"] and docs["keeper.txt"]["version"] == 2
    assert "Fjordhead" in docs["keeper.txt"]["content_summary"]
