"""Logs at INFO carry the request id and project, never document text, queries, prompts or API keys, also
when things fail (provider errors, garbage model output, a query without keywords)."""

from __future__ import annotations

import re

from tests.support.fakes.openai_server import default_extract

SECRET_KEY = "sk-very-secret-key-4711"
MARKER = "zorblaxian"  # a word that appears only in the document text and the query


async def test_no_document_text_prompts_or_keys_in_info_logs(make_settings, start_app, fake_llm, capfd):
    app = await start_app(make_settings(api_keys=[SECRET_KEY], log_level="INFO", llm_max_retries=0))
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

    fake_llm.handlers["keywords"] = lambda m: '{"high_level_keywords": [], "low_level_keywords": []}'
    for path in ("/query", "/query/stream"):
        response = await http.post(
            path, json={"project_id": "privacy", "query": f"What are {MARKER} crystals?"}, headers=headers
        )
        assert response.status_code == 200
    assert (await http.post("/query", json={"project_id": "privacy", "query": "x"})).status_code == 401

    logs = capfd.readouterr().err
    assert "document privacy/" in logs and "failed" in logs  # the failure was logged ...
    assert "unparseable extraction record" in logs  # ... and so was the garbage ...
    assert MARKER not in logs.lower()  # ... without the text, the query or any prompt
    assert "Marlowe" not in logs and "Lisbon" not in logs and SECRET_KEY not in logs
    assert "HTTP Request:" not in logs  # HTTP client request lines (URLs may carry provider keys) stay below INFO
    request_lines = [line for line in logs.splitlines() if "no keywords extracted" in line]
    assert request_lines and all(re.search(r"request_id=\w{16} project=privacy ", line) for line in request_lines)
