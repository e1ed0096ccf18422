"""Embeddings from an OpenAI-compatible endpoint: batched, concurrent up to a limit, dimension-checked.

`embed` fails as a whole. `embed_each` isolates inputs the endpoint refuses (400/422: too long for it,
filtered, unreadable): a refused batch is split in halves, again until each refused input stands alone,
so one bad text costs the others nothing; when every input is refused the call fails (the request, not
an input, is wrong: a model name, say).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
import sys
from array import array
from dataclasses import dataclass, field

import openai

from app.core import metrics
from app.core.config import Settings
from app.core.errors import EmbeddingNotConfigured, ProviderError
from app.core.usage import current_usage
from app.providers.budget import CallBudget
from app.providers.failures import failure_message, provider_message
from app.providers.openai_http import openai_client, reported_count, request_options
from app.providers.tokenizer import Tokenizer

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


class InputRefused(ProviderError):
    """The endpoint refused a batch as bad input (HTTP 400 or 422), not as a failure of its own."""

    def __init__(self, detail: str) -> None:
        super().__init__(f"Embedding endpoint refused the input: {detail}")
        self.detail = detail


@dataclass
class EachEmbedded:
    """Vectors in input order (None for a refused input) and why each refused input was refused."""

    vectors: list[list[float] | None]
    refused: dict[int, str] = field(default_factory=dict)


class EmbeddingClient:
    def __init__(self, settings: Settings, tokenizer: Tokenizer, budget: CallBudget | None = None) -> None:
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
                budget=budget,
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
        batches = [texts[i : i + size] for i in range(0, len(texts), size)]
        results = await asyncio.gather(*(self._embed_batch(batch) for batch in batches))
        return [vector for batch in results for vector in batch]

    async def embed_one(self, text: str) -> list[float]:
        return (await self.embed([text]))[0]

    async def embed_each(self, texts: list[str]) -> EachEmbedded:
        """Like `embed`, but an input the endpoint refuses gets no vector instead of failing the others."""
        if not texts:
            return EachEmbedded([])
        if self._client is None:
            raise EmbeddingNotConfigured()
        size = self.settings.embedding_batch_size
        results = await asyncio.gather(*(self._isolating(texts[i : i + size]) for i in range(0, len(texts), size)))
        out = EachEmbedded([item if isinstance(item, list) else None for batch in results for item in batch])
        out.refused = {i: item for i, item in enumerate(x for batch in results for x in batch) if isinstance(item, str)}
        if len(out.refused) == len(texts):
            raise InputRefused(next(iter(out.refused.values())))
        for index, reason in out.refused.items():
            log.warning("embedding input %d of %d refused: %s", index + 1, len(texts), reason)
        return out

    async def _isolating(self, texts: list[str]) -> list[list[float] | str]:
        """The batch's vectors, halving a refused batch until each refused input (its reason) stands alone."""
        try:
            return list(await self._embed_batch(texts))
        except InputRefused as exc:
            if len(texts) == 1:
                return [exc.detail]
        half = len(texts) // 2
        left, right = await asyncio.gather(self._isolating(texts[:half]), self._isolating(texts[half:]))
        return left + right

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
                data = await self._client.post(
                    "/embeddings",
                    cast_to=object,
                    options=request_options(),
                    body={"model": self.model, "input": inputs, "encoding_format": "base64"},
                )
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                metrics.EMBEDDING_CALLS.labels(self.model, "error").inc()
                raise InputRefused(f"{exc.status_code}: {provider_message(exc)}") from exc
            except openai.OpenAIError as exc:
                metrics.EMBEDDING_CALLS.labels(self.model, "error").inc()
                log.warning("embedding call failed: %s", type(exc).__name__)
                raise ProviderError(failure_message("Embedding", exc)) from exc
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
