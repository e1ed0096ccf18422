"""Rerank with a timeout and a circuit breaker; any failure keeps the original order.

After `rerank_breaker_fail_max` consecutive failures the breaker opens and the provider is not called
until `rerank_breaker_reset_timeout` has passed; then one trial call (half-open) closes or re-opens it.
Every fallback logs a warning and counts RERANK_FALLBACKS{reason}; the breaker state is exported as
RERANK_BREAKER_STATE{provider} (0 closed, 1 half-open, 2 open).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

import httpx2
import pybreaker

from app.core import metrics
from app.core.config import Settings
from app.providers.budget import CallBudget, retry_after_seconds
from app.providers.rerank import RerankProvider, build_provider

log = logging.getLogger(__name__)

_STATE_VALUE = {pybreaker.STATE_CLOSED: 0, pybreaker.STATE_HALF_OPEN: 1, pybreaker.STATE_OPEN: 2}


class _StateGauge(pybreaker.CircuitBreakerListener):
    def __init__(self, provider: str) -> None:
        self.provider = provider

    def state_change(self, cb: pybreaker.CircuitBreaker, old_state: Any, new_state: Any) -> None:
        metrics.RERANK_BREAKER_STATE.labels(self.provider).set(_STATE_VALUE.get(new_state.name, 0))
        log.warning("rerank circuit breaker for %s is now %s", self.provider, new_state.name)


@dataclass
class RerankOutcome:
    """`order` = (index into the input, score) best first, already filtered by min_rerank_score;
    None when no rerank happened (disabled or fell back): keep the original order."""

    order: list[tuple[int, float]] | None
    fallback_reason: str | None = None


class RerankService:
    def __init__(
        self, settings: Settings, provider: RerankProvider | None = None, budget: CallBudget | None = None
    ) -> None:
        self.settings = settings
        self.provider = provider if provider is not None else build_provider(settings)
        self.budget = budget  # the fleet's rerank budget; its wait counts in RERANK_TIMEOUT
        self.breaker = pybreaker.CircuitBreaker(
            fail_max=settings.rerank_breaker_fail_max,
            reset_timeout=settings.rerank_breaker_reset_timeout,
            throw_new_error_on_trip=False,
        )
        if self.provider is not None:
            self.breaker.add_listener(_StateGauge(self.provider.name))
            metrics.RERANK_BREAKER_STATE.labels(self.provider.name).set(0)

    @property
    def enabled(self) -> bool:
        return self.provider is not None

    def _fallback(self, reason: str, detail: str = "") -> RerankOutcome:
        metrics.RERANK_FALLBACKS.labels(reason).inc()
        if self.provider is not None:
            metrics.RERANK_CALLS.labels(self.provider.name, reason).inc()
        log.warning("rerank skipped (%s)%s; keeping the original chunk order", reason, f": {detail}" if detail else "")
        return RerankOutcome(None, reason)

    async def rerank(self, query: str, documents: list[str], top_n: int) -> RerankOutcome:
        if self.provider is None or not documents:
            return RerankOutcome(None)
        try:
            with self.breaker.calling():
                order = await asyncio.wait_for(
                    self._budgeted(self.provider, query, documents, top_n), timeout=self.settings.rerank_timeout
                )
        except pybreaker.CircuitBreakerError:
            return self._fallback("breaker_open")
        except TimeoutError:
            return self._fallback("timeout")
        except Exception as exc:  # any provider failure must never fail the query
            return self._fallback("error", f"{type(exc).__name__}: {exc}")
        if not order:
            return self._fallback("empty")
        metrics.RERANK_CALLS.labels(self.provider.name, "ok").inc()
        minimum = self.settings.min_rerank_score
        if minimum > 0:
            order = [(i, s) for i, s in order if s >= minimum]
        return RerankOutcome(order[:top_n])

    async def _budgeted(
        self, provider: RerankProvider, query: str, documents: list[str], top_n: int
    ) -> list[tuple[int, float]]:
        if self.budget is None:
            return await provider.rerank(query, documents, top_n)
        admission = await self.budget.admit(0)
        try:
            return await provider.rerank(query, documents, top_n)
        except Exception as exc:
            status, headers = _status_of(exc)
            if status == 429:
                await self.budget.rate_limited(retry_after_seconds(httpx2.Headers(headers or {})))
            raise
        finally:
            await self.budget.done(admission, None)

    async def close(self) -> None:
        if self.provider is not None:
            await self.provider.close()


def _status_of(exc: Exception) -> tuple[int | None, dict[str, str] | None]:
    """The HTTP status and headers of a provider's error (httpx's for Jina, the Cohere SDK's own)."""
    response = getattr(exc, "response", None)
    if response is not None and hasattr(response, "status_code"):
        return response.status_code, dict(response.headers)
    status = getattr(exc, "status_code", None)
    return (status if isinstance(status, int) else None), getattr(exc, "headers", None)
