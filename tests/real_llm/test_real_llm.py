"""A real small model in the loop (opt-in, `make test-real-llm`): llama-cpp-python serves it, the service
ingests two short texts, queries in every mode and runs the model check. Tiny models extract poorly; what is
asserted is that the pipeline degrades gracefully and reports it: nothing crashes, every document and chunk
ends processed, records are parsed. Embeddings come from the fake server (the point here is the LLM)."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from sqlalchemy import select

from app.db.tables import chunks
from app.providers.llm import forget_provider_knowledge
from tests.real_llm.conftest import CONTEXT_WINDOW, MODELS, llama_server, selected_models
from tests.real_llm.prefill_proxy import prefill_proxy
from tests.support.database import TEST_DIM
from tests.support.live_server import serve_in_thread

TEXTS = [
    "Ada Lindqvist is a marine biologist at the Norrsund Institute in Bergen. In 2019 she led the Coral Atlas "
    "project, which the Halvorsen Foundation funded.",
    "Tomas Berg built Skarv, an underwater drone. Skarv photographed the cold-water reefs of the Coral Atlas "
    "off the Norwegian coast.",
]
MODES = ["naive", "local", "global", "hybrid", "mix", "bypass"]
DOCUMENT_TIMEOUT = 3600


async def _wait_done(http, ids: list[str]) -> dict[str, dict]:
    deadline = time.monotonic() + DOCUMENT_TIMEOUT
    while True:
        docs = {i: (await http.get(f"/documents/{i}")).json() for i in ids}
        if all(d["status"] in ("processed", "failed") for d in docs.values()):
            return docs
        assert time.monotonic() < deadline, docs
        await asyncio.sleep(2)


@pytest.mark.parametrize("model", selected_models())
async def test_real_model_end_to_end(model, start_app, make_settings, fake_server, tmp_path):
    forget_provider_knowledge()
    servers = llama_server(model, tmp_path)
    upstream = next(servers)
    proxy = serve_in_thread(prefill_proxy(upstream, MODELS[model][1]), lifespan="off")
    try:
        app = await start_app(
            make_settings(
                llm_base_url=f"{proxy.url}/v1",
                llm_model=model,
                llm_timeout=1800,
                llm_max_retries=0,
                llm_max_async=1,
                llm_max_tokens_extract=1024,
                llm_max_tokens_answer=512,
                llm_context_window=CONTEXT_WINDOW,
                llm_temperature=0.2,
                embedding_base_url=fake_server.url,
                embedding_dim=TEST_DIM,
                max_parallel_insert=1,
            )
        )
        http = app.http
        started = time.monotonic()
        response = await http.post("/documents", json={"documents": [{"text": t} for t in TEXTS]})
        assert response.status_code == 202
        ids = [d["id"] for d in response.json()["documents"]]
        docs = await _wait_done(http, ids)
        ingest_seconds = time.monotonic() - started
        assert all(d["status"] == "processed" for d in docs.values()), docs
        async with app.container.db.connect() as conn:
            rows = (
                (
                    await conn.execute(
                        select(
                            chunks.c.id,
                            chunks.c.embedding.is_not(None).label("embedded"),
                            chunks.c.extraction_cache_keys,
                        )
                    )
                )
                .mappings()
                .all()
            )
        assert rows and all(r["embedded"] and r["extraction_cache_keys"] for r in rows)
        reports = [d["extraction_report"] for d in docs.values()]
        answers = {}
        for mode in MODES:
            reply = await http.post("/query", json={"query": "Who funded the Coral Atlas project?", "mode": mode})
            assert reply.status_code == 200, (mode, reply.text)
            answers[mode] = (reply.json().get("response") or "")[:80]
        check = (await http.get("/health/llm", params={"deep": "true"})).json()["check"]
        assert check["verdict"] in ("good", "usable", "not recommended")
        summary = {
            "model": model,
            "ingest_seconds": round(ingest_seconds),
            "reports": reports,
            "check": {
                k: check[k]
                for k in (
                    "verdict",
                    "reasons",
                    "records_parsed",
                    "records_unparseable",
                    "facts_found",
                    "facts_total",
                    "keywords_json",
                    "entities",
                )
            },
            "check_calls": [(c["call"], c["latency_ms"], c["completion_tokens"], c["runaway"]) for c in check["calls"]],
            "answers": answers,
        }
        print("\nREAL-LLM RESULT " + json.dumps(summary))
        parsed = sum(r["entities"] + r["relations"] for r in reports) + check["records_parsed"]
        assert parsed > 0, summary
    finally:
        proxy.stop()
        servers.close()
        forget_provider_knowledge()
