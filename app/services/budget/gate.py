"""One provider's share of the fleet budget in this process: callers queue here, and one taker at a time asks
the database for as many of them as are waiting (up to TAKE_BATCH) in a single round trip, so a busy
process pays one round trip per batch of calls, not one per call. Callers are admitted in their order of
arrival; a caller waits at most PROVIDER_BUDGET_MAX_WAIT, and may be cancelled while it waits.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from dataclasses import dataclass, field

from app.core import metrics
from app.db.engine import Database
from app.providers.budget import Admission, BudgetWaitTimeout
from app.repositories import provider_budget as budget_repo
from app.repositories.provider_budget import Limits, Taken

log = logging.getLogger(__name__)

TAKE_BATCH = 16
# When the database says nothing about how long to wait (leases full, or a refill of less than a request),
# ask again after this long; never sleep longer than MAX_NAP, so capacity given back elsewhere is seen soon.
MIN_NAP = 0.02
MAX_NAP = 0.5


@dataclass
class _Waiter:
    tokens: int
    future: asyncio.Future[Admission] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class BudgetGate:
    def __init__(
        self,
        db: Database,
        *,
        key: str,
        kind: str,
        limits: Limits,
        holder: str,
        lease_seconds: float,
        max_wait: float,
    ) -> None:
        self.db = db
        self.key = key
        self.kind = kind
        self.limits = limits
        self.holder = holder
        self.lease_seconds = lease_seconds
        self.max_wait = max_wait
        self.held: set[int] = set()  # leases of calls in flight, renewed by the fleet while they last
        self._waiters: collections.deque[_Waiter] = collections.deque()
        self._taker: asyncio.Task[None] | None = None
        self._refund = 0  # estimates minus real usage, given back with the next take
        self._nudge = asyncio.Event()

    async def admit(self, tokens: int) -> Admission:
        waiter = _Waiter(tokens)
        self._waiters.append(waiter)
        if self._taker is None or self._taker.done():
            self._taker = asyncio.get_running_loop().create_task(self._take_loop())
        started = time.monotonic()
        try:
            ticket = await asyncio.wait_for(asyncio.shield(waiter.future), self.max_wait)
        except (TimeoutError, asyncio.CancelledError) as exc:
            await self._abandon(waiter)
            if isinstance(exc, TimeoutError):
                metrics.BUDGET_WAIT_TIMEOUTS.labels(self.kind).inc()
                log.warning("a %s call waited %g s for the fleet's provider budget: gave up", self.kind, self.max_wait)
                raise BudgetWaitTimeout(
                    f"waited {self.max_wait:g} s for the {self.kind} provider budget (PROVIDER_BUDGET_MAX_WAIT)"
                ) from None
            raise
        waited = time.monotonic() - started
        if waited > MIN_NAP:
            metrics.BUDGET_WAITS.labels(self.kind).inc()
            metrics.BUDGET_WAIT_SECONDS.labels(self.kind).inc(waited)
        return ticket

    async def _abandon(self, waiter: _Waiter) -> None:
        """A caller that gave up: out of the queue, or, if it was admitted meanwhile, its lease given back."""
        if waiter.future.done() and not waiter.future.cancelled():
            await self.done(waiter.future.result(), None)
        else:
            waiter.future.cancel()
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    async def done(self, ticket: Admission, tokens_used: int | None) -> None:
        if tokens_used is not None and self.limits.tpm:
            self._refund += ticket.tokens - tokens_used
        if ticket.lease_id is None:
            return
        self.held.discard(ticket.lease_id)
        try:
            async with self.db.transaction() as conn:
                await budget_repo.release(conn, [ticket.lease_id])
        except Exception as exc:  # the lease expires by itself
            log.warning("provider budget: could not give back a lease: %s", type(exc).__name__)
        self._nudge.set()

    async def rate_limited(self, retry_after: float | None) -> None:
        metrics.BUDGET_RATE_LIMITED.labels(self.kind).inc()
        if retry_after is None or retry_after <= 0:
            return
        log.warning("the %s provider answered 429: the fleet pauses for %.1f s", self.kind, retry_after)
        async with self.db.transaction() as conn:
            await budget_repo.pause(conn, self.key, self.kind, retry_after)

    async def _take_loop(self) -> None:
        while self._waiters:
            batch = [w for w in list(self._waiters)[:TAKE_BATCH] if not w.future.done()]
            if not batch:
                self._drop_done()
                continue
            refund, self._refund = self._refund, 0
            try:
                async with self.db.transaction() as conn:
                    taken = await budget_repo.take(
                        conn,
                        self.key,
                        self.kind,
                        self.limits,
                        [w.tokens for w in batch],
                        self.holder,
                        self.lease_seconds,
                        refund,
                    )
            except Exception as exc:
                self._refund += refund
                log.warning("provider budget: cannot reach the database (%s); retrying", type(exc).__name__)
                await asyncio.sleep(MAX_NAP)
                continue
            self._hand_out(batch, taken)
            if taken.granted < len(batch):
                await self._nap(self._wait_hint(batch[taken.granted].tokens, taken))
        self._taker = None

    def _hand_out(self, batch: list[_Waiter], taken: Taken) -> None:
        metrics.set_budget_state(self.kind, taken.requests, taken.tokens, taken.leased)
        leases = iter(taken.lease_ids)
        for waiter in batch[: taken.granted]:
            lease_id = next(leases, None)
            if lease_id is not None:
                self.held.add(lease_id)
            if waiter.future.done():  # its caller left while the database answered: give its lease back
                asyncio.get_running_loop().create_task(self.done(Admission(waiter.tokens, lease_id), None))
            else:
                waiter.future.set_result(Admission(waiter.tokens, lease_id))
        self._drop_done()

    def _drop_done(self) -> None:
        self._waiters = collections.deque(w for w in self._waiters if not w.future.done())

    def _wait_hint(self, tokens: int, taken: Taken) -> float:
        """How long until the next caller could be admitted, as far as the bucket tells."""
        if taken.paused_for > 0:
            return taken.paused_for
        hints = [MIN_NAP]
        if self.limits.rpm and taken.requests < 1:
            hints.append((1 - taken.requests) * 60 / self.limits.rpm)
        if self.limits.tpm:
            need = min(tokens, max(1.0, self.limits.tpm / 60))
            hints.append((need - taken.tokens) * 60 / self.limits.tpm)
        return max(hints)

    async def _nap(self, seconds: float) -> None:
        """Sleep until capacity is likely back, or until a lease of this process is given back."""
        self._nudge.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._nudge.wait(), min(MAX_NAP, max(MIN_NAP, seconds)))
