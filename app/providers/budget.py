"""Every HTTP request to a provider passes its fleet budget (app/services/budget) when one is set.

The budget sits in the HTTP transport under the `openai` SDK, so the SDK's own retries pass it too and a
429's Retry-After reaches the whole fleet, not only the call that met it. Tokens are estimated from the
request before it is sent (its bytes / 4, plus its max_tokens) and corrected from the answer's `usage`
afterwards (for answers read whole; a streamed answer keeps its estimate). With no budget configured for a
provider, its clients are built without this transport: nothing is asked of the database.
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol

import httpx2

_MAX_TOKENS = re.compile(rb'"max_tokens":\s*(\d+)')
_TOTAL_TOKENS = re.compile(rb'"total_tokens":\s*(\d+)')
_PROMPT_TOKENS = re.compile(rb'"prompt_tokens":\s*(\d+)')
_COMPLETION_TOKENS = re.compile(rb'"completion_tokens":\s*(\d+)')
BYTES_PER_TOKEN = 4


@dataclass
class Admission:
    """One request let through: the tokens it was charged (an estimate) and its lease, if calls at once are limited."""

    tokens: int
    lease_id: int | None = None


class CallBudget(Protocol):
    """One provider's share of the fleet budget, as a client sees it."""

    async def admit(self, tokens: int) -> Admission:
        """Wait (bounded, cancellable) until the fleet may send one more request of about `tokens` tokens."""

    async def done(self, admission: Admission, tokens_used: int | None) -> None:
        """The request ended: free its lease, and correct its tokens when the provider reported them."""

    async def rate_limited(self, retry_after: float | None) -> None:
        """The provider answered 429: count it, and pause the whole fleet for `retry_after` seconds if given."""


class BudgetWaitTimeout(httpx2.PoolTimeout):
    """No budget within PROVIDER_BUDGET_MAX_WAIT: reported like a connection-pool timeout (the SDK retries it)."""


def retry_after_seconds(headers: httpx2.Headers, now: float | None = None) -> float | None:
    """Seconds a provider asks to wait: `retry-after-ms`, else `Retry-After` in seconds or as an HTTP date."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = (headers.get("retry-after") or "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def estimate_tokens(body: bytes) -> int:
    """Prompt tokens guessed from the request's size, plus the completion it may ask for."""
    cap = _last(_MAX_TOKENS, body) or 0
    return max(1, len(body) // BYTES_PER_TOKEN) + cap


def reported_tokens(body: bytes) -> int | None:
    """The tokens an answer's `usage` reports (total, else prompt + completion), None when it has none."""
    total = _last(_TOTAL_TOKENS, body)
    if total is not None:
        return total
    prompt = _last(_PROMPT_TOKENS, body)
    if prompt is None:
        return None
    return prompt + (_last(_COMPLETION_TOKENS, body) or 0)


def _last(pattern: re.Pattern[bytes], body: bytes) -> int | None:
    # the request's own fields come last in the bodies we send, usage last in answers: search the tail first
    for window in (body[-2048:], body):
        found = pattern.findall(window)
        if found:
            return int(found[-1])
    return None


class _ReleasingStream(httpx2.AsyncByteStream):
    """A streamed answer's body: the request's lease is given back when the stream is closed."""

    def __init__(self, inner: httpx2.AsyncByteStream, budget: CallBudget, admission: Admission) -> None:
        self._inner = inner
        self._budget = budget
        self._admission: Admission | None = admission

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for part in self._inner:
            yield part

    async def aclose(self) -> None:
        try:
            await self._inner.aclose()
        finally:
            admission, self._admission = self._admission, None
            if admission is not None:
                await self._budget.done(admission, None)


class BudgetedTransport(httpx2.AsyncBaseTransport):
    def __init__(self, inner: httpx2.AsyncBaseTransport, budget: CallBudget) -> None:
        self._inner = inner
        self._budget = budget

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = request.content if isinstance(request.stream, httpx2.ByteStream) else b""
        admission = await self._budget.admit(estimate_tokens(body))
        try:
            response = await self._inner.handle_async_request(request)
        except BaseException:
            await self._budget.done(admission, None)
            raise
        if response.status_code == 429:
            await self._budget.rate_limited(retry_after_seconds(response.headers))
        if "text/event-stream" in response.headers.get("content-type", ""):
            response.stream = _ReleasingStream(response.stream, self._budget, admission)  # type: ignore[arg-type]
            return response
        try:
            content = await response.aread()
        except BaseException:
            await self._budget.done(admission, None)
            raise
        await self._budget.done(admission, reported_tokens(content) if response.status_code == 200 else None)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()
