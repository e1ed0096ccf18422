"""The bench's reranker: one model that reorders both systems' chunks (`--rerank`), so neither gets a better one.

No cross-encoder installs offline from PyPI with its weights inside (none is in the bench's reach), so this
is the honest fallback: the bundled MiniLM bi-encoder (bench/realtext/embed.py), scoring a chunk by its best
passage. A chunk's stored vector comes from its first 128 tokens only; here every window of WINDOW words
(half overlapping) is embedded and the chunk scores the highest cosine between the question and a window, so
the whole of a 1,200-token chunk counts. Window vectors are cached on disk like every other embedding.

It is served by the bench's fake provider (bench/realtext/provider.py) at `/v1/rerank` in the Jina/Cohere
shape: the service reaches it through its own `jina` rerank binding, official LightRAG through
`official_rerank_func`, which posts the same request.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

WINDOW = 80  # words: about MiniLM's 128 word pieces on this corpus
STRIDE = WINDOW // 2
MODEL = "minilm-maxp"


class _Embeds(Protocol):
    def embed(self, texts: list[str]) -> Any: ...


def windows(text: str, size: int = WINDOW, stride: int = STRIDE) -> list[str]:
    """The text as windows of `size` words, each starting `stride` words after the last, the last one reaching
    the end; a short (or empty) text is one window."""
    words = text.split()
    if len(words) <= size:
        return [" ".join(words)]
    starts = list(range(0, len(words) - size, stride)) + [len(words) - size]
    return [" ".join(words[s : s + size]) for s in starts]


def scores(embedder: _Embeds, query: str, documents: list[str]) -> list[float]:
    """Each document's best cosine between the query and one of its windows (vectors are unit length)."""
    cut = [windows(d) for d in documents]
    flat = [w for ws in cut for w in ws]
    if not flat:
        return []
    similarity = _cosines(embedder.embed([query, *flat]))
    out, at = [], 0
    for ws in cut:
        out.append(max(similarity[at : at + len(ws)]))
        at += len(ws)
    return out


def _cosines(vectors: Any) -> list[float]:
    """The first vector's dot product with each of the others: a numpy matrix (MiniLM), or lists (the tests)."""
    if hasattr(vectors, "shape"):
        return [float(x) for x in vectors[1:] @ vectors[0]]
    query = vectors[0]
    return [sum(a * b for a, b in zip(v, query, strict=True)) for v in vectors[1:]]


def warm(embedder: _Embeds, texts: list[str]) -> int:
    """Embed (and so cache) every window of `texts`; returns how many windows."""
    flat = [w for t in texts for w in windows(t)]
    embedder.embed(flat)
    return len(flat)


def ranked(embedder: _Embeds, query: str, documents: list[str], top_n: int | None) -> list[dict[str, Any]]:
    """The rerank response's results: {index, relevance_score}, best first, at most `top_n` (None: all); ties
    keep the order given."""
    order = sorted(enumerate(scores(embedder, query, documents)), key=lambda item: -item[1])
    if top_n is not None and top_n > 0:
        order = order[:top_n]
    return [{"index": i, "relevance_score": s} for i, s in order]


def service_settings(provider_url: str) -> dict[str, Any]:
    """The service's settings that send its rerank to the provider's `/v1/rerank` through the Jina binding;
    a loaded machine's MiniLM is slow, so no timeout or breaker cuts it short."""
    return {
        "rerank_binding": "jina",
        "rerank_binding_host": provider_url + "/rerank",
        "rerank_timeout": 600,
        "rerank_breaker_fail_max": 1000,
    }


def response(embedder: _Embeds, body: dict[str, Any]) -> dict[str, Any]:
    """The provider's answer to a rerank request body ({query, documents, top_n, ...})."""
    documents = [str(d) for d in body["documents"]]
    return {"model": body.get("model"), "results": ranked(embedder, str(body["query"]), documents, body.get("top_n"))}


def official_rerank_func(http: Any) -> Callable[..., Awaitable[list[dict[str, Any]]]]:
    """Official LightRAG's `rerank_model_func`, asking the provider's `/rerank` (relative to `http`'s base URL)
    exactly what the service's Jina binding asks. A plain function: LightRAG deep-copies its configuration."""

    async def rerank(query: str, documents: list[str], top_n: int | None = None, **_: Any) -> list[dict[str, Any]]:
        body = {"model": MODEL, "query": query, "documents": documents, "top_n": top_n, "return_documents": False}
        response = await http.post("/rerank", json=body)
        response.raise_for_status()
        return list(response.json()["results"])

    return rerank
