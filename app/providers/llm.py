"""Chat completions through the `openai` SDK against any OpenAI-compatible endpoint.

Bounded, priority-ordered concurrency; the SDK retries 408/409/429/5xx and timeouts with exponential
backoff; every call reports its tokens to the current `Usage` and to Prometheus. Cancelling a call (its
client went away) frees its slot, or its place in the queue for one, and drops the provider request.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

import openai

from app import metrics
from app.config import Settings
from app.domain.chat import Message, strip_think
from app.errors import LLMNotConfigured, ProviderError
from app.providers.concurrency import PrioritySemaphore
from app.providers.openai_http import BEARER_ONLY, openai_client, reported_count
from app.providers.tokenizer import Tokenizer
from app.usage import current_usage

log = logging.getLogger(__name__)

# Operations: "extract", "glean", "summary", "keywords", "query", "bypass". The name is sent as a header
# so proxies and gateways (and our test fake) can tell the purposes of calls apart.
OPERATION_HEADER = "X-LightRAG-Operation"

PRIORITY_QUERY = 5
PRIORITY_SUMMARY = 8
PRIORITY_EXTRACT = 10

def parse_completion(data: object) -> tuple[str, str | None, int | None, int | None]:
    """(text, finish_reason, prompt_tokens, completion_tokens) of a chat-completions JSON body; token
    counts are None where the provider did not report them. ValueError for a body without an answer."""
    choices = data.get("choices") if isinstance(data, dict) else None
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
        raise ValueError("response has no choices")
    message = choices[0].get("message")
    content = (message.get("content") if isinstance(message, dict) else None) or ""
    if not isinstance(content, str):
        raise ValueError(f"response content is a {type(content).__name__}, not text")
    finish_reason = choices[0].get("finish_reason")
    usage = data.get("usage")
    if not isinstance(usage, dict):
        usage = {}
    return (content, finish_reason if isinstance(finish_reason, str) else None,
            reported_count(usage.get("prompt_tokens")), reported_count(usage.get("completion_tokens")))


@dataclass
class LLMResult:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None = None  # "length" = cut by the output-token limit (never cached)


class LLMClient:
    def __init__(self, settings: Settings, tokenizer: Tokenizer) -> None:
        self.settings = settings
        self.tokenizer = tokenizer
        self.model = settings.llm_model or ""
        self.semaphore = PrioritySemaphore(settings.llm_max_async)
        self._by_operation: dict[str, tuple[Any, Any, Any, Any]] = {}
        self._client: openai.AsyncOpenAI | None = None
        if settings.llm_configured:
            self._client = openai_client(
                base_url=settings.llm_base_url,
                api_key=settings.llm_api_key or "not-needed",
                timeout=settings.llm_timeout,
                max_retries=settings.llm_max_retries,
            )

    @property
    def configured(self) -> bool:
        return self._client is not None

    def require(self) -> openai.AsyncOpenAI:
        if self._client is None:
            raise LLMNotConfigured()
        return self._client

    def _body(self, messages: list[Message], json_mode: bool, max_tokens: int | None) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if self.settings.llm_temperature is not None:
            body["temperature"] = self.settings.llm_temperature
        if json_mode:
            body["response_format"] = {"type": "json_object"}
        if max_tokens:
            body["max_tokens"] = max_tokens
        return body

    def _count_prompt(self, messages: list[Message]) -> int:
        return sum(self.tokenizer.count(m.get("content") or "") + 4 for m in messages)

    def _series(self, operation: str) -> tuple[Any, Any, Any, Any]:
        """The metric children of one operation, looked up once (`labels()` locks and hashes on every call)."""
        series = self._by_operation.get(operation)
        if series is None:
            series = self._by_operation[operation] = (
                metrics.LLM_CALLS.labels(operation, self.model, "ok"),
                metrics.LLM_TOKENS.labels(operation, self.model, "prompt"),
                metrics.LLM_TOKENS.labels(operation, self.model, "completion"),
                metrics.LLM_LATENCY.labels(operation),
            )
        return series

    def _record(self, operation: str, prompt_tokens: int, completion_tokens: int, started: float,
                outcome: str | None = "ok") -> None:
        """Tokens and latency of a call; `outcome` None when the call was already counted (as an error)."""
        calls, prompt, completion, latency = self._series(operation)
        if outcome == "ok":
            calls.inc()
        elif outcome is not None:
            metrics.LLM_CALLS.labels(operation, self.model, outcome).inc()
        prompt.inc(prompt_tokens)
        completion.inc(completion_tokens)
        latency.observe(time.perf_counter() - started)
        usage = current_usage()
        if usage is not None:
            usage.add_llm(operation, prompt_tokens, completion_tokens)

    def _cancelled(self, operation: str) -> None:
        metrics.LLM_CALLS.labels(operation, self.model, "cancelled").inc()
        log.info("LLM call cancelled (%s): its caller went away", operation)

    def _fail(self, operation: str, exc: Exception) -> ProviderError:
        metrics.LLM_CALLS.labels(operation, self.model, "error").inc()
        log.warning("LLM call failed (%s): %s", operation, type(exc).__name__)
        return ProviderError(f"LLM request failed after retries: {type(exc).__name__}: {exc}")

    async def chat(
        self,
        messages: list[Message],
        *,
        operation: str,
        priority: int = PRIORITY_EXTRACT,
        json_mode: bool = False,
        max_tokens: int | None = None,
    ) -> LLMResult:
        client = self.require()
        # `client.post` sends the body as given: `chat.completions.create` would first walk every message
        # through the SDK's type-driven transform (a no-op for plain text messages, ~25% of a call's CPU)
        # and build a pydantic model from the answer (another ~10%)
        body = self._body(messages, json_mode, max_tokens)
        options = {"headers": {OPERATION_HEADER: operation}, "security": BEARER_ONLY}
        async with self.semaphore.slot(priority):
            started = time.perf_counter()
            metrics.LLM_IN_FLIGHT.inc()
            try:
                data = await client.post("/chat/completions", cast_to=object, body=body, options=options)
            except openai.OpenAIError as exc:
                raise self._fail(operation, exc) from exc
            except asyncio.CancelledError:
                self._cancelled(operation)
                raise
            finally:
                metrics.LLM_IN_FLIGHT.dec()
        try:
            raw, finish_reason, reported_prompt, reported_completion = parse_completion(data)
        except ValueError as exc:
            raise self._fail(operation, exc) from exc
        raw = raw.replace("\x00", "")  # PostgreSQL text refuses NUL
        prompt_tokens = self._count_prompt(messages) if reported_prompt is None else reported_prompt
        completion_tokens = self.tokenizer.count(raw) if reported_completion is None else reported_completion
        self._record(operation, prompt_tokens, completion_tokens, started)
        return LLMResult(strip_think(raw), prompt_tokens, completion_tokens, finish_reason)

    async def stream(
        self, messages: list[Message], *, operation: str, priority: int = PRIORITY_QUERY
    ) -> AsyncGenerator[str, None]:
        """Yield text deltas; usage is recorded when the stream ends (provider's, else counted). Closing the
        generator early (or cancelling it) closes the provider's stream and frees the slot at once."""
        client = self.require()
        async with self.semaphore.slot(priority):
            started = time.perf_counter()
            parts: list[str] = []
            reported = None
            outcome: str | None = "cancelled"  # until the provider's stream has ended by itself
            try:
                stream = await client.chat.completions.create(
                    **self._body(messages, False, None),
                    extra_headers={OPERATION_HEADER: operation},
                    stream=True,
                    stream_options={"include_usage": True},
                )
                async with stream:
                    async for chunk in stream:
                        if chunk.usage is not None:
                            reported = chunk.usage
                        for choice in chunk.choices or []:
                            delta = (choice.delta.content or "").replace("\x00", "") if choice.delta else None
                            if delta:
                                parts.append(delta)
                                yield delta
                outcome = "ok"
            except openai.OpenAIError as exc:
                outcome = None
                raise self._fail(operation, exc) from exc
            finally:
                if outcome == "cancelled":
                    log.info("LLM stream closed early (%s): its caller went away", operation)
                text = "".join(parts)
                prompt_tokens = reported.prompt_tokens if reported else self._count_prompt(messages)
                completion_tokens = reported.completion_tokens if reported else self.tokenizer.count(text)
                self._record(operation, prompt_tokens, completion_tokens, started, outcome)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
