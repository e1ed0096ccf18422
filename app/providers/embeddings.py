"""Embeddings from an OpenAI-compatible endpoint: batched, concurrent up to a limit, dimension-checked."""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
import sys
from array import array

import openai

from app import metrics
from app.config import Settings
from app.errors import EmbeddingNotConfigured, ProviderError
from app.providers.openai_http import openai_client, reported_count, request_options
from app.providers.tokenizer import Tokenizer
from app.usage import current_usage

log = logging.getLogger(__name__)


def _vector(value: object) -> list[float]:
    if isinstance(value, str):  # base64 of little-endian float32, as the SDK asks for by default
        floats = array("f", base64.b64decode(value, validate=True))
        if sys.byteorder == "big":
            floats.byteswap()
        return floats.tolist()
    if isinstance(value, list):  # endpoints that ignore encoding_format answer plain floats
        return value
    raise ValueError(f"an embedding is a {type(value).__name__}")


def parse_embeddings(data: object) -> tuple[list[list[float]], int | None]:
    """(vectors in input order, reported prompt tokens or None) of an embeddings JSON body; ValueError if malformed."""
    if not isinstance(data, dict):
        raise ValueError("no list of embeddings in the response")
    items = data.get("data")
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise ValueError("no list of embeddings in the response")
    try:
        vectors = [_vector(item["embedding"]) for item in sorted(items, key=lambda item: item["index"])]
    except (KeyError, TypeError, binascii.Error) as exc:
        raise ValueError(f"{type(exc).__name__}: {exc}") from exc
    usage = data.get("usage")
    return vectors, reported_count(usage.get("prompt_tokens")) if isinstance(usage, dict) else None


class EmbeddingClient:
    def __init__(self, settings: Settings, tokenizer: Tokenizer) -> None:
        self.settings = settings
        self.tokenizer = tokenizer
        self.model = settings.embedding_model or ""
        self.dim = settings.embedding_dim
        self._semaphore = asyncio.Semaphore(settings.embedding_max_async)
        self._client: openai.AsyncOpenAI | None = None
        if settings.embedding_configured:
            self._client = openai_client(
                base_url=settings.embedding_base_url or settings.llm_base_url,
                api_key=settings.embedding_api_key or settings.llm_api_key or "not-needed",
                timeout=settings.embedding_timeout,
                max_retries=settings.embedding_max_retries,
            )

    @property
    def configured(self) -> bool:
        return self._client is not None

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        if self._client is None:
            raise EmbeddingNotConfigured()
        size = self.settings.embedding_batch_size
        batches = [texts[i:i + size] for i in range(0, len(texts), size)]
        results = await asyncio.gather(*(self._embed_batch(batch) for batch in batches))
        return [vector for batch in results for vector in batch]

    async def embed_one(self, text: str) -> list[float]:
        return (await self.embed([text]))[0]

    async def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        assert self._client is not None
        limit = self.settings.embedding_max_tokens
        inputs = [self.tokenizer.truncate(t, limit) if len(t) > limit else t for t in texts]
        inputs = [t if t.strip() else " " for t in inputs]  # endpoints reject empty strings
        async with self._semaphore:
            try:
                # `client.post`, not `embeddings.create`: that one re-walks the inputs through the SDK's
                # type-driven transform, builds a pydantic model per vector and tries to import numpy on
                # every call (~45% of a call's CPU); the body and the base64 answer are the SDK's own
                data = await self._client.post("/embeddings", cast_to=object, options=request_options(),
                                               body={"model": self.model, "input": inputs, "encoding_format": "base64"})
            except openai.OpenAIError as exc:
                metrics.EMBEDDING_CALLS.labels(self.model, "error").inc()
                log.warning("embedding call failed: %s", type(exc).__name__)
                raise ProviderError(f"Embedding request failed after retries: {type(exc).__name__}: {exc}") from exc
        try:
            vectors, reported = parse_embeddings(data)
        except ValueError as exc:
            metrics.EMBEDDING_CALLS.labels(self.model, "error").inc()
            raise ProviderError(f"Embedding endpoint returned a malformed response: {exc}") from exc
        if len(vectors) != len(inputs):
            raise ProviderError(f"Embedding endpoint returned {len(vectors)} vectors for {len(inputs)} inputs")
        if any(len(v) != self.dim for v in vectors):
            raise ProviderError(
                f"Embedding endpoint returned {len(vectors[0])}-d vectors but EMBEDDING_DIM is {self.dim}"
            )
        tokens = sum(map(self.tokenizer.count, inputs)) if reported is None else reported
        metrics.EMBEDDING_CALLS.labels(self.model, "ok").inc()
        metrics.EMBEDDING_TOKENS.labels(self.model).inc(tokens)
        usage = current_usage()
        if usage is not None:
            usage.add_embedding(tokens)
        return vectors

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
