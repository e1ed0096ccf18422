"""Rerank providers behind one interface: `rerank(query, documents, top_n) -> [(index, score)]`, best first.

Cohere through its SDK (v2 `/v2/rerank`), Jina over HTTP (`/v1/rerank`). Retries are left to nobody: a
reranker sits on the query path behind a short timeout and a circuit breaker (app/services/rerank.py).
"""

from __future__ import annotations

import math
from typing import Protocol

import cohere
import httpx

from app.core.config import Settings

COHERE_DEFAULT_MODEL = "rerank-v3.5"
COHERE_DEFAULT_HOST = "https://api.cohere.com"
JINA_DEFAULT_MODEL = "jina-reranker-v2-base-multilingual"
JINA_DEFAULT_URL = "https://api.jina.ai/v1/rerank"


class RerankProvider(Protocol):
    name: str

    async def rerank(self, query: str, documents: list[str], top_n: int) -> list[tuple[int, float]]: ...

    async def close(self) -> None: ...


def clean_results(pairs: list[tuple[object, object]], n_docs: int) -> list[tuple[int, float]]:
    """Drop invalid items (non-int or out-of-range index, non-finite score, repeats); sort by score desc."""
    out: dict[int, float] = {}
    for index, score in pairs:
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < n_docs:
            continue
        if not isinstance(score, (int, float)) or isinstance(score, bool) or not math.isfinite(score):
            continue
        out.setdefault(index, float(score))
    return sorted(out.items(), key=lambda item: -item[1])


class CohereReranker:
    name = "cohere"

    def __init__(self, settings: Settings) -> None:
        host = (settings.rerank_binding_host or COHERE_DEFAULT_HOST).rstrip("/")
        host = host.removesuffix("/v2/rerank").removesuffix("/v1/rerank")
        self.model = settings.rerank_model or COHERE_DEFAULT_MODEL
        self._client = cohere.AsyncClientV2(
            api_key=settings.rerank_binding_api_key or "not-needed",
            base_url=host,
            timeout=settings.rerank_timeout,
            max_retries=0,
        )

    async def rerank(self, query: str, documents: list[str], top_n: int) -> list[tuple[int, float]]:
        response = await self._client.rerank(model=self.model, query=query, documents=documents, top_n=top_n)
        return clean_results([(r.index, r.relevance_score) for r in response.results], len(documents))

    async def close(self) -> None:
        return None  # the SDK owns its httpx client for the process lifetime


class JinaReranker:
    name = "jina"

    def __init__(self, settings: Settings) -> None:
        url = (settings.rerank_binding_host or JINA_DEFAULT_URL).rstrip("/")
        self.url = url if url.endswith("/rerank") else url + "/v1/rerank"
        self.model = settings.rerank_model or JINA_DEFAULT_MODEL
        headers = {"Content-Type": "application/json"}
        if settings.rerank_binding_api_key:
            headers["Authorization"] = f"Bearer {settings.rerank_binding_api_key}"
        self._client = httpx.AsyncClient(headers=headers, timeout=settings.rerank_timeout)

    async def rerank(self, query: str, documents: list[str], top_n: int) -> list[tuple[int, float]]:
        body = {"model": self.model, "query": query, "documents": documents, "top_n": top_n, "return_documents": False}
        response = await self._client.post(self.url, json=body)
        response.raise_for_status()
        results = response.json().get("results")
        if not isinstance(results, list):
            raise ValueError("rerank response has no results list")
        pairs = [(r.get("index"), r.get("relevance_score")) for r in results if isinstance(r, dict)]
        return clean_results(pairs, len(documents))

    async def close(self) -> None:
        await self._client.aclose()


def build_provider(settings: Settings) -> RerankProvider | None:
    if settings.rerank_binding == "cohere":
        return CohereReranker(settings)
    if settings.rerank_binding == "jina":
        return JinaReranker(settings)
    return None
