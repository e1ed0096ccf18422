"""The real-text bench's reranker (bench/realtext/rerank.py): windows, scoring, and one HTTP shape that the
service's own Jina client and official LightRAG's rerank function both read the same way. A bag-of-words
embedder stands in for MiniLM, so it runs without the bench extra."""

from __future__ import annotations

import math
from collections import Counter

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from app.core.config import Settings
from app.providers.rerank import JinaReranker, build_provider
from bench.realtext import rerank
from tests.support.live_server import serve_in_thread

VOCABULARY = ["insulin", "glucose", "heart", "artery", "skin", "cancer"]


class BagOfWords:
    """Unit vectors of word counts over VOCABULARY (a text with none of them points along a spare axis)."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.seen += texts
        out = []
        for text in texts:
            counts = Counter(text.lower().split())
            vector = [float(counts[w]) for w in VOCABULARY] + [0.1]
            norm = math.sqrt(sum(x * x for x in vector))
            out.append([x / norm for x in vector])
        return out


def test_windows_cover_the_whole_text_half_overlapping_and_a_short_text_is_one_window():
    text = " ".join(f"w{i}" for i in range(200))
    cut = rerank.windows(text, size=80, stride=40)
    assert [w.split()[0] for w in cut] == ["w0", "w40", "w80", "w120"]
    assert cut[-1].split()[-1] == "w199" and all(len(w.split()) == 80 for w in cut)
    assert rerank.windows("a short one") == ["a short one"]
    assert rerank.windows("") == [""]


def test_a_chunk_scores_by_its_best_window_so_an_answer_late_in_a_long_chunk_counts():
    filler = " ".join(["skin"] * 200)
    late = filler + " insulin glucose insulin"
    early_only = "insulin " + " ".join(["heart"] * 300)
    embedder = BagOfWords()
    results = rerank.ranked(embedder, "insulin glucose", [filler, late, early_only], top_n=None)
    assert [r["index"] for r in results] == [1, 2, 0]
    assert results[0]["relevance_score"] > results[1]["relevance_score"] > results[2]["relevance_score"]
    assert embedder.seen[0] == "insulin glucose"  # the question is embedded once, with every window after it
    assert rerank.ranked(embedder, "insulin glucose", [filler, late, early_only], top_n=2) == results[:2]
    assert len(rerank.ranked(embedder, "insulin", [filler, late], top_n=1)) == 1
    assert rerank.ranked(embedder, "insulin", [], top_n=3) == []


def test_warming_embeds_every_window_of_every_text_once():
    embedder = BagOfWords()
    texts = [" ".join(["heart"] * 200), "skin cancer"]
    assert rerank.warm(embedder, texts) == 5
    assert embedder.seen == [*rerank.windows(texts[0]), "skin cancer"]


@pytest.fixture
def rerank_url():
    """The provider's `/v1/rerank` route (the same `rerank.response`) on a loopback port, with BagOfWords."""
    embedder = BagOfWords()
    asked: list[dict] = []

    async def route(request: Request) -> Response:
        body = await request.json()
        asked.append(body)
        return JSONResponse(rerank.response(embedder, body))

    live = serve_in_thread(Starlette(routes=[Route("/v1/rerank", route, methods=["POST"])]), lifespan="off")
    try:
        yield f"{live.url}/v1", asked
    finally:
        live.stop()


async def test_the_service_and_official_ask_the_same_request_and_read_the_same_order(rerank_url):
    url, asked = rerank_url
    documents = ["skin cancer", "heart artery artery", "insulin and glucose", "artery"]
    service_side = build_provider(Settings(_env_file=None, **rerank.service_settings(url)))
    assert isinstance(service_side, JinaReranker) and service_side.url == f"{url}/rerank"
    try:
        from_service = await service_side.rerank("which artery of the heart", documents, 2)
    finally:
        await service_side.close()
    async with httpx.AsyncClient(base_url=url) as http:
        from_official = await rerank.official_rerank_func(http)(
            query="which artery of the heart", documents=documents, top_n=2
        )
    assert [i for i, _ in from_service] == [r["index"] for r in from_official] == [1, 3]
    assert [s for _, s in from_service] == pytest.approx([r["relevance_score"] for r in from_official])
    assert [(b["query"], b["documents"], b["top_n"]) for b in asked] == [
        ("which artery of the heart", documents, 2)
    ] * 2


def test_a_saved_run_is_reused_only_with_the_same_rerank_choice():
    import argparse

    from bench.realtext import data
    from bench.realtext.__main__ import reused_official

    questions = data.stratified(data.questions(), 1, seed=7)
    rows = [{"system": "official", "budget": "tight", "mode": "mix", "id": q.id, "coverage": 1.0} for q in questions]
    args = argparse.Namespace(embeddings="minilm", modes=["mix"], budgets=["tight"], rerank=True)
    with pytest.raises(ValueError, match="rerank False, this one True"):
        reused_official({"args": {"embeddings": "minilm"}, "rows": rows}, questions, args)
    saved = {"args": {"embeddings": "minilm", "rerank": True}, "rows": rows}
    assert len(reused_official(saved, questions, args)["rows"]) == len(questions)
