"""Rerank against fake Cohere (SDK, /v2/rerank) and Jina (HTTP, /v1/rerank) servers: reorder, min score,
timeout fallback, circuit breaker, and the effect on /query."""

from __future__ import annotations

import pytest
from prometheus_client import REGISTRY

from app.core.config import Settings
from app.providers.rerank_breaker import RerankService
from tests.support.fakes.rerank_server import FakeRerank
from tests.support.query_graph import THRESHOLD, WEATHER_QUERY, algernon_graph

DOCS = ["apples and pears", "the weather is hot", "hot weather in the summer city"]


@pytest.fixture(scope="module")
def rerank_server():
    server = FakeRerank().start()
    yield server
    server.stop()


@pytest.fixture
def fake_rerank(rerank_server):
    rerank_server.reset()
    yield rerank_server
    rerank_server.reset()


def rerank_settings(binding: str, url: str, **overrides) -> Settings:
    host = url if binding == "cohere" else url + "/v1/rerank"
    return Settings(
        _env_file=None, rerank_binding=binding, rerank_binding_host=host, rerank_binding_api_key="k", **overrides
    )


def metric(name: str, labels: dict) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.mark.parametrize("binding,path", [("cohere", "/v2/rerank"), ("jina", "/v1/rerank")])
async def test_provider_reorders_and_filters_by_min_score(fake_rerank, binding, path):
    service = RerankService(rerank_settings(binding, fake_rerank.url, min_rerank_score=0.5))
    outcome = await service.rerank("hot summer weather", DOCS, top_n=3)
    assert fake_rerank.hits[path] == 1
    assert [i for i, _ in outcome.order] == [2, 1]  # doc 0 scored 0 → dropped by the minimum
    assert outcome.order[0][1] == pytest.approx(1.0)
    assert fake_rerank.bodies[0]["top_n"] == 3 and fake_rerank.bodies[0]["documents"] == DOCS
    await service.close()


async def test_slow_provider_falls_back_to_original_order(fake_rerank):
    fake_rerank.latency = 1.0
    service = RerankService(rerank_settings("jina", fake_rerank.url, rerank_timeout=0.1))
    before = metric("rerank_fallbacks_total", {"reason": "timeout"})
    outcome = await service.rerank("hot", DOCS, top_n=3)
    assert outcome.order is None and outcome.fallback_reason == "timeout"
    assert metric("rerank_fallbacks_total", {"reason": "timeout"}) == before + 1
    await service.close()


async def test_breaker_opens_after_five_failures_and_half_opens_later(fake_rerank):
    fake_rerank.fail_status = 500
    service = RerankService(
        rerank_settings("cohere", fake_rerank.url, rerank_breaker_fail_max=5, rerank_breaker_reset_timeout=60)
    )
    for _ in range(5):
        assert (await service.rerank("hot", DOCS, 3)).fallback_reason == "error"
    assert fake_rerank.hits["/v2/rerank"] == 5
    assert metric("rerank_circuit_breaker_state", {"provider": "cohere"}) == 2
    for _ in range(3):  # open: the provider is not even called
        assert (await service.rerank("hot", DOCS, 3)).fallback_reason == "breaker_open"
    assert fake_rerank.hits["/v2/rerank"] == 5

    service.breaker.reset_timeout = 0  # the reset timeout has elapsed: next call is the half-open trial
    fake_rerank.fail_status = None
    outcome = await service.rerank("hot weather", DOCS, 3)
    assert outcome.order is not None and fake_rerank.hits["/v2/rerank"] == 6
    assert service.breaker.current_state == "closed"
    assert metric("rerank_circuit_breaker_state", {"provider": "cohere"}) == 0
    await service.close()


async def test_failed_half_open_trial_reopens(fake_rerank):
    fake_rerank.fail_status = 503
    service = RerankService(
        rerank_settings("jina", fake_rerank.url, rerank_breaker_fail_max=2, rerank_breaker_reset_timeout=60)
    )
    for _ in range(2):
        await service.rerank("hot", DOCS, 3)
    service.breaker.reset_timeout = 0
    assert (await service.rerank("hot", DOCS, 3)).fallback_reason == "error"  # the trial call fails
    assert service.breaker.current_state == "open"
    assert fake_rerank.hits["/v1/rerank"] == 3
    await service.close()


@pytest.fixture
async def rerank_app(start_app, make_settings, fake_rerank):
    app = await start_app(
        make_settings(
            cosine_threshold=THRESHOLD,
            rerank_binding="cohere",
            rerank_binding_host=fake_rerank.url,
            min_rerank_score=0.1,
        )
    )
    async with app.container.db.transaction() as conn:
        await algernon_graph().insert(conn)
    return app


async def test_query_chunks_follow_rerank_scores_and_min_score(rerank_app, fake_rerank):
    body = {
        "query": WEATHER_QUERY,
        "mode": "mix",
        "ll_keywords": ["Charlie Gordon"],
        "chunk_selection": "weight",
        "only_need_context": True,
    }
    plain = (await rerank_app.http.post("/query", json={**body, "enable_rerank": False})).json()
    assert fake_rerank.hits["/v2/rerank"] == 0
    original = [c["id"] for c in plain["context"]["chunks"]]
    assert len(original) == 4

    fake_rerank.scores = {0: 0.05, 1: 0.6, 2: 0.9, 3: 0.3}  # by position in the merged list
    reranked = (await rerank_app.http.post("/query", json=body)).json()
    assert fake_rerank.hits["/v2/rerank"] == 1
    chunks = reranked["context"]["chunks"]
    assert [c["id"] for c in chunks] == [original[2], original[1], original[3]]  # 0.05 < 0.1 dropped
    assert [c["rerank_score"] for c in chunks] == [0.9, 0.6, 0.3]


async def test_query_survives_a_failing_reranker_with_original_order(rerank_app, fake_rerank):
    body = {
        "query": WEATHER_QUERY,
        "mode": "mix",
        "ll_keywords": ["Charlie Gordon"],
        "chunk_selection": "weight",
        "only_need_context": True,
    }
    plain = (await rerank_app.http.post("/query", json={**body, "enable_rerank": False})).json()
    fake_rerank.fail_status = 500
    response = await rerank_app.http.post("/query", json=body)
    assert response.status_code == 200
    assert [c["id"] for c in response.json()["context"]["chunks"]] == [c["id"] for c in plain["context"]["chunks"]]
    metrics = (await rerank_app.http.get("/metrics")).text
    assert 'rerank_fallbacks_total{reason="error"}' in metrics
    assert 'rerank_circuit_breaker_state{provider="cohere"}' in metrics


async def test_breaker_state_is_exported_from_start_up(start_app, make_settings, fake_rerank):
    app = await start_app(make_settings(rerank_binding="jina", rerank_binding_host=fake_rerank.url))
    assert app.container.reranker.enabled
    metrics = (await app.http.get("/metrics")).text
    assert 'rerank_circuit_breaker_state{provider="jina"} 0.0' in metrics
