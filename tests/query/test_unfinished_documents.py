"""Only processed documents answer: the chunks of a cancelled or failed document (embedded before it stopped)
are never retrieved by naive or mix queries, chat `/context` or the /lightrag query routes, and its file name is
never a reference; retried to `processed`, it answers."""

from __future__ import annotations

import asyncio
import json
import threading

from sqlalchemy import func, select

from app.db.tables import chunks
from tests.ingest.test_progress_cancel import make_app, until_document
from tests.support.fakes.openai_server import chunk_text, default_extract
from tests.support.faults import until

KEPT = "Marta Quill repairs violins in Lisbon. Marta Quill smuggles saffron through Lisbon harbour."
CANCELLED = "Zephyrine Holloway smuggles saffron through Tangier. Zephyrine Holloway forges lanterns."
FAILED = "Quirinus Vale forges lanterns in Bruges. Quirinus Vale smuggles saffron through Bruges."
QUESTION = "Who smuggles saffron and who forges lanterns?"
HIDDEN = ("Zephyrine", "Tangier", "Quirinus", "Bruges", "cancelled.txt", "failed.txt")


class GatedModel:
    """Extraction of the cancelled and failed documents waits until the test opens their gate (their chunks are
    embedded by then); the failed one's model then answers 500 until `failing` is cleared."""

    def __init__(self) -> None:
        self.gates = {"Zephyrine": threading.Event(), "Quirinus": threading.Event()}
        self.failing = True

    async def extract(self, messages: list[dict]) -> str:
        text = chunk_text(messages)
        for word, gate in self.gates.items():
            if word in text:
                await asyncio.to_thread(gate.wait, 30)
                if word == "Quirinus" and self.failing:
                    raise RuntimeError("model down")
        return default_extract(messages)


async def add(app, text: str, file_path: str, wait: bool = False) -> str:
    response = await app.http.post(
        "/documents", json={"project_id": "p", "wait": wait, "documents": [{"text": text, "file_path": file_path}]}
    )
    assert response.status_code in (200, 202), response.text
    return response.json()["documents"][0]["id"]


async def embedded_chunks(app, doc_id: str) -> int:
    async with app.container.db.connect() as conn:
        return int(
            await conn.scalar(
                select(func.count())
                .select_from(chunks)
                .where(chunks.c.document_id == doc_id, chunks.c.embedding.is_not(None))
            )
        )


async def answers(app) -> dict[str, str]:
    """Everything each query route returns for QUESTION in project p, as text."""
    out = {}
    for mode in ("naive", "mix"):
        response = await app.http.post("/query", json={"project_id": "p", "query": QUESTION, "mode": mode})
        assert response.status_code == 200, response.text
        out[f"/query {mode}"] = response.text
    chat = await app.http.post(
        "/v1/chat/completions",
        json={"model": "lightrag:p", "messages": [{"role": "user", "content": f"/context {QUESTION}"}]},
    )
    assert chat.status_code == 200, chat.text
    out["chat /context"] = chat.text
    workspace = {"LIGHTRAG-WORKSPACE": "p"}
    for path in ("/lightrag/query", "/lightrag/query/data"):
        for mode in ("naive", "mix"):
            response = await app.http.post(path, headers=workspace, json={"query": QUESTION, "mode": mode})
            assert response.status_code == 200, response.text
            out[f"{path} {mode}"] = response.text
    return out


async def test_cancelled_and_failed_documents_never_answer_until_processed(start_app, make_settings, fake_llm):
    app = await make_app(start_app, make_settings)
    model = GatedModel()
    fake_llm.handlers["extract"] = model.extract
    await add(app, KEPT, "kept.txt", wait=True)

    cancelled = await add(app, CANCELLED, "cancelled.txt")
    await until(lambda: embedded_chunks(app, cancelled))
    assert (await app.http.post(f"/documents/{cancelled}/cancel", json={"project_id": "p"})).status_code == 202
    model.gates["Zephyrine"].set()
    assert (await until_document(app, cancelled, lambda d: d["status"] != "processing"))["status"] == "cancelled"

    failed = await add(app, FAILED, "failed.txt")
    await until(lambda: embedded_chunks(app, failed))
    model.gates["Quirinus"].set()
    assert (await until_document(app, failed, lambda d: d["status"] not in ("pending", "processing")))[
        "status"
    ] == "failed"
    assert await embedded_chunks(app, cancelled) and await embedded_chunks(app, failed)  # there to be found

    for route, text in (await answers(app)).items():
        assert "kept.txt" in text or "Marta" in text, route  # the processed document still answers
        for hidden in HIDDEN:
            assert hidden not in text, (route, hidden)

    model.failing = False
    assert (await app.http.post(f"/documents/{failed}/retry", json={"project_id": "p"})).status_code == 200
    assert (await until_document(app, failed, lambda d: d["status"] not in ("pending", "processing")))[
        "status"
    ] == "processed"
    after = await answers(app)
    naive = json.loads(after["/query naive"])
    assert "failed.txt" in [r["file_path"] for r in naive["references"]]
    assert "Quirinus" in after["chat /context"]
    assert all("Zephyrine" not in text and "cancelled.txt" not in text for text in after.values())
