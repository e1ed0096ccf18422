"""Chat completions through the `openai` SDK against any OpenAI-compatible endpoint.

Bounded, priority-ordered concurrency; the SDK retries 408/409/429/5xx and timeouts with exponential
backoff; every call reports its tokens to the current `Usage` and to Prometheus. Cancelling a call (its
client went away) frees its slot, or its place in the queue for one, and drops the provider request.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

import openai
from openai._types import RequestOptions

from app.core import metrics
from app.core.config import Settings
from app.core.error_codes import ErrorCode
from app.core.errors import LLMNotConfigured, ProviderError
from app.core.usage import current_usage
from app.domain.chat import Message, strip_think
from app.providers.budget import CallBudget
from app.providers.concurrency import PrioritySemaphore
from app.providers.failures import failure_message
from app.providers.openai_http import openai_client, parse_completion, request_options
from app.providers.read_ahead import read_ahead
from app.providers.tokenizer import Tokenizer

log = logging.getLogger(__name__)

# Operations: "extract", "glean", "summary", "keywords", "query", "bypass". The name is sent as a header
# so proxies and gateways (and our test fake) can tell the purposes of calls apart.
OPERATION_HEADER = "X-LightRAG-Operation"

PRIORITY_QUERY = 5
PRIORITY_SUMMARY = 8
PRIORITY_EXTRACT = 10

# An answer stream read ahead of a client that is not reading stops (with an error) past this much unread text:
# with LLM_MAX_TOKENS_ANSWER set, answers never come near it.
STREAM_READ_AHEAD_BYTES = 16 * 2**20
# Which completion cap (a Settings field) applies to each operation.
_CAP_SETTING = {
    "extract": "llm_max_tokens_extract",
    "extract_retry": "llm_max_tokens_extract",
    "glean": "llm_max_tokens_extract",
    "keywords": "llm_max_tokens_keywords",
    "summary": "llm_max_tokens_summary",
    "query": "llm_max_tokens_answer",
    "bypass": "llm_max_tokens_answer",
}
# The prompt is counted with our tokenizer, not the model's: leave room for the difference.
_PROMPT_MARGIN = 1.15
_CONTEXT_ERROR = re.compile(
    r"context[ _](?:length|window|size)|maximum context|too many tokens|prompt is too long|"
    r"exceeds? (?:the )?(?:model'?s? )?(?:maximum|max|available)|input is too long|n_ctx",
    re.IGNORECASE,
)
_WINDOW_IN_ERROR = (
    re.compile(r"maximum context length is (\d+)", re.IGNORECASE),
    re.compile(r"context (?:window|length|size) (?:of|is) (\d+)", re.IGNORECASE),
    re.compile(r"\bn_ctx\W{0,4}(\d+)", re.IGNORECASE),
    re.compile(r"(\d+)[- ]token (?:context|window)", re.IGNORECASE),
)
_STRUCTURED_ERROR = re.compile(r"response_format|json_schema|structured output", re.IGNORECASE)

# Per (base URL, model), in this process: whether the provider accepted JSON-schema output (absent: not
# tried yet) and the context window it stated when it rejected a call for its length.
_structured_support: dict[tuple[str, str], bool] = {}
_learned_windows: dict[tuple[str, str], int] = {}


def forget_provider_knowledge() -> None:
    """Forget what providers told this process (structured-output support, context windows): for tests."""
    _structured_support.clear()
    _learned_windows.clear()


class ContextLengthExceeded(ProviderError):
    """The provider rejected the call for its length (prompt plus completion past the model's window)."""

    code: ErrorCode = "llm_context_exceeded"

    def __init__(self, detail: str, window: int | None) -> None:
        super().__init__(detail)
        self.window = window


class StructuredOutputRejected(ProviderError):
    """The provider refused the `response_format` JSON-schema parameter."""

    code: ErrorCode = "llm_structured_output_rejected"


def context_window_from_error(message: str) -> int | None:
    """The window a provider's context-length error states ("maximum context length is 8192 tokens")."""
    for pattern in _WINDOW_IN_ERROR:
        match = pattern.search(message)
        if match and 256 <= int(match.group(1)) <= 10_000_000:
            return int(match.group(1))
    return None


def json_schema_format(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The `response_format` asking for JSON that follows `schema`."""
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": False}}


@dataclass
class LLMResult:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None = None  # "length" = cut by the output-token limit (never cached)

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"


class LLMClient:
    def __init__(self, settings: Settings, tokenizer: Tokenizer, budget: CallBudget | None = None) -> None:
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
                budget=budget,
            )

    @property
    def configured(self) -> bool:
        return self._client is not None

    @property
    def _provider(self) -> tuple[str, str]:
        return (self.settings.llm_base_url or "", self.model)

    @property
    def context_window(self) -> int | None:
        """LLM_CONTEXT_WINDOW, else the window the provider stated when it rejected a call, else None."""
        return self.settings.llm_context_window or _learned_windows.get(self._provider)

    @property
    def structured_outputs(self) -> bool | None:
        """Whether the provider accepted JSON-schema output in this process (None: not asked yet)."""
        return _structured_support.get(self._provider)

    def completion_cap(self, operation: str, messages: list[Message] | None = None) -> int | None:
        """max_tokens for a call: its operation's cap, lowered so that prompt plus answer fit the known
        context window (when the prompt leaves room at all)."""
        setting = _CAP_SETTING.get(operation)
        cap = getattr(self.settings, setting) if setting else 0
        window = self.context_window
        if window and messages is not None:
            room = window - int(self._count_prompt(messages) * _PROMPT_MARGIN)
            if room > 0:
                cap = min(cap, room) if cap else room
        return cap or None

    def require(self) -> openai.AsyncOpenAI:
        if self._client is None:
            raise LLMNotConfigured()
        return self._client

    def _body(
        self,
        messages: list[Message],
        json_mode: bool,
        max_tokens: int | None,
        response_format: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if self.settings.llm_temperature is not None:
            body["temperature"] = self.settings.llm_temperature
        if response_format is not None:
            body["response_format"] = response_format
        elif json_mode:
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

    def _record(
        self, operation: str, prompt_tokens: int, completion_tokens: int, started: float, outcome: str | None = "ok"
    ) -> None:
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
        return ProviderError(failure_message("LLM", exc))

    def _refusal(self, operation: str, exc: openai.APIStatusError, structured: bool) -> ProviderError:
        """A provider's 4xx, told apart: JSON-schema output refused, a call too long for the model, or other."""
        message = f"{exc.message} {exc.body}" if exc.body is not None else str(exc.message)
        # some servers (llama-cpp-python) answer an unsupported response_format with a 500 that names it
        if structured and _STRUCTURED_ERROR.search(message):
            _structured_support[self._provider] = False
            metrics.STRUCTURED_OUTPUT_FALLBACKS.labels(operation).inc()
            log.warning("the LLM provider refused JSON-schema output (%s): using the record format", operation)
            return StructuredOutputRejected(f"the provider refused response_format: {exc.message}")
        if exc.status_code in (400, 413, 422) and _CONTEXT_ERROR.search(message):
            window = context_window_from_error(message)
            if window:
                _learned_windows[self._provider] = window
            metrics.LLM_CALLS.labels(operation, self.model, "error").inc()
            metrics.LLM_CONTEXT_REJECTIONS.labels(operation).inc()
            log.warning("LLM call rejected for its length (%s); context window %s", operation, window or "not stated")
            return ContextLengthExceeded(f"the call exceeds the model's context window: {exc.message}", window)
        return self._fail(operation, exc)

    async def chat(
        self,
        messages: list[Message],
        *,
        operation: str,
        priority: int = PRIORITY_EXTRACT,
        json_mode: bool = False,
        max_tokens: int | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> LLMResult:
        """One completion. `max_tokens` None: the operation's cap (LLM_MAX_TOKENS_*), fitted to the context
        window. `response_format` (json_schema_format) asks for structured output; a provider refusing it
        raises StructuredOutputRejected, one refusing the call's length ContextLengthExceeded (after one
        retry with a smaller max_tokens when the refusal stated a window that the prompt fits)."""
        client = self.require()
        # `client.post` sends the body as given: `chat.completions.create` would first walk every message
        # through the SDK's type-driven transform (a no-op for plain text messages, ~25% of a call's CPU)
        # and build a pydantic model from the answer (another ~10%)
        cap = max_tokens if max_tokens is not None else self.completion_cap(operation, messages)
        body = self._body(messages, json_mode, cap, response_format)
        options = request_options({OPERATION_HEADER: operation})
        async with self.semaphore.slot(priority):
            started = time.perf_counter()
            metrics.LLM_IN_FLIGHT.inc()
            try:
                data = await self._post(
                    client, body, options, operation, response_format is not None, retry_fit=max_tokens is None
                )
            except asyncio.CancelledError:
                self._cancelled(operation)
                raise
            finally:
                metrics.LLM_IN_FLIGHT.dec()
        if response_format is not None:
            _structured_support.setdefault(self._provider, True)
        try:
            raw, finish_reason, reported_prompt, reported_completion = parse_completion(data)
        except ValueError as exc:
            raise self._fail(operation, exc) from exc
        raw = raw.replace("\x00", "")  # PostgreSQL text refuses NUL
        prompt_tokens = self._count_prompt(messages) if reported_prompt is None else reported_prompt
        completion_tokens = self.tokenizer.count(raw) if reported_completion is None else reported_completion
        self._record(operation, prompt_tokens, completion_tokens, started)
        if finish_reason == "length":
            metrics.LLM_RUNAWAY_ANSWERS.labels(operation, "length").inc()
            log.warning("LLM answer cut by its max_tokens cap (%s, %d tokens)", operation, completion_tokens)
        return LLMResult(strip_think(raw), prompt_tokens, completion_tokens, finish_reason)

    async def _post(
        self,
        client: openai.AsyncOpenAI,
        body: dict[str, Any],
        options: RequestOptions,
        operation: str,
        structured: bool,
        *,
        retry_fit: bool,
    ) -> object:
        try:
            return await client.post("/chat/completions", cast_to=object, body=body, options=options)
        except openai.APIStatusError as exc:
            error = self._refusal(operation, exc, structured)
            if not (retry_fit and isinstance(error, ContextLengthExceeded) and error.window):
                raise error from exc
            fitted = self.completion_cap(operation, body["messages"])
            if fitted is None or fitted >= (body.get("max_tokens") or error.window):
                raise error from exc
        except openai.OpenAIError as exc:
            raise self._fail(operation, exc) from exc
        try:  # once more, asking for an answer that fits the window the provider stated
            return await client.post(
                "/chat/completions", cast_to=object, body={**body, "max_tokens": fitted}, options=options
            )
        except openai.APIStatusError as exc:
            raise self._refusal(operation, exc, structured) from exc
        except openai.OpenAIError as exc:
            raise self._fail(operation, exc) from exc

    def stream(
        self, messages: list[Message], *, operation: str, priority: int = PRIORITY_QUERY
    ) -> AsyncGenerator[str, None]:
        """Yield text deltas; usage is recorded when the stream ends (provider's, else counted). The provider's
        stream is read ahead of the caller (app/providers/read_ahead.py): its slot is freed when the model has
        finished, however slowly the caller reads. Closing the generator early (or cancelling it) closes the
        provider's stream and frees the slot at once."""
        return read_ahead(self._provider_stream(messages, operation, priority), STREAM_READ_AHEAD_BYTES)

    async def _provider_stream(
        self, messages: list[Message], operation: str, priority: int
    ) -> AsyncGenerator[str, None]:
        client = self.require()
        async with self.semaphore.slot(priority):
            started = time.perf_counter()
            parts: list[str] = []
            reported = None
            outcome: str | None = "cancelled"  # until the provider's stream has ended by itself
            try:
                stream = await client.chat.completions.create(
                    **self._body(messages, False, self.completion_cap(operation, messages)),
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
