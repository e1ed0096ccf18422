"""The provider budgets of this process: one gate per provider kind that has a limit set, the renewal of the
leases of calls in flight, and the budgets' use for GET /pipeline and /metrics."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid

from app.core import metrics
from app.core.config import Settings
from app.db.engine import Database
from app.repositories import provider_budget as budget_repo
from app.repositories.provider_budget import Limits
from app.services.budget.gate import BudgetGate

log = logging.getLogger(__name__)

KINDS = ("chat", "embeddings", "rerank")


def budget_limits(settings: Settings) -> dict[str, tuple[Limits, str, str]]:
    """Per kind with any limit set: its limits, the provider (base URL) and the model they apply to."""
    s = settings
    found = {
        "chat": (Limits(s.llm_rpm, s.llm_tpm, s.llm_max_concurrent_fleet), s.llm_base_url or "", s.llm_model or ""),
        "embeddings": (
            Limits(s.embedding_rpm, s.embedding_tpm, s.embedding_max_concurrent_fleet),
            s.embedding_base_url or s.llm_base_url or "",
            s.embedding_model or "",
        ),
        "rerank": (
            Limits(s.rerank_rpm, 0, s.rerank_max_concurrent_fleet),
            f"{s.rerank_binding} {s.rerank_binding_host or ''}".strip(),
            s.rerank_model or "",
        ),
    }
    return {kind: value for kind, value in found.items() if value[0] != Limits()}


class FleetBudget:
    def __init__(self, settings: Settings, db: Database) -> None:
        self.settings = settings
        self.db = db
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.gates: dict[str, BudgetGate] = {}
        self.models: dict[str, str] = {}
        for kind, (limits, provider, model) in budget_limits(settings).items():
            self.models[kind] = model
            self.gates[kind] = BudgetGate(
                db,
                key=f"{kind} {provider} {model}",
                kind=kind,
                limits=limits,
                holder=self.holder,
                lease_seconds=settings.provider_lease_ttl,
                max_wait=settings.provider_budget_max_wait,
            )
        self._renewal: asyncio.Task[None] | None = None

    def gate(self, kind: str) -> BudgetGate | None:
        return self.gates.get(kind)

    def start(self) -> None:
        if any(g.limits.concurrent for g in self.gates.values()):
            self._renewal = asyncio.get_running_loop().create_task(self._renew_leases())

    async def _renew_leases(self) -> None:
        while True:
            await asyncio.sleep(self.settings.provider_lease_ttl / 3)
            if not any(g.held for g in self.gates.values()):
                continue
            try:
                async with self.db.transaction() as conn:
                    await budget_repo.renew(conn, self.holder, self.settings.provider_lease_ttl)
            except Exception as exc:  # the next beat tries again; a lease lost meanwhile only frees a slot early
                log.warning("provider budget: could not renew leases: %s", type(exc).__name__)

    async def use(self) -> list[dict]:
        """Each configured budget: its limits and what the fleet uses of it now (no provider URL)."""
        if not self.gates:
            return []
        async with self.db.connect() as conn:
            rows = {r["key"]: r for r in await budget_repo.states(conn, [g.key for g in self.gates.values()])}
        out = []
        for kind, gate in self.gates.items():
            row = rows.get(gate.key, {})
            out.append(
                {
                    "kind": kind,
                    "model": self.models[kind],
                    "rpm": gate.limits.rpm,
                    "tpm": gate.limits.tpm,
                    "max_concurrent": gate.limits.concurrent,
                    "requests_this_minute": int(row.get("window_requests", 0)),
                    "tokens_this_minute": int(row.get("window_tokens", 0)),
                    "in_flight": int(row.get("leased", 0)),
                    "paused_for_seconds": round(float(row.get("paused_for", 0.0)), 3),
                    "rate_limited": int(row.get("rate_limited", 0)),
                }
            )
        return out

    async def refresh_metrics(self) -> list[dict]:
        try:
            use = await self.use()
        except Exception as exc:
            log.warning("metrics: cannot read the provider budget: %s", type(exc).__name__)
            return []
        for item in use:
            kind = item["kind"]
            metrics.BUDGET_WINDOW_REQUESTS.labels(kind).set(item["requests_this_minute"])
            metrics.BUDGET_WINDOW_TOKENS.labels(kind).set(item["tokens_this_minute"])
            metrics.BUDGET_LEASES.labels(kind).set(item["in_flight"])
            metrics.BUDGET_PAUSED_SECONDS.labels(kind).set(item["paused_for_seconds"])
        return use

    async def close(self) -> None:
        if self._renewal is not None:
            self._renewal.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewal
            self._renewal = None
        held = [lease for g in self.gates.values() for lease in g.held]
        if held:
            with contextlib.suppress(Exception):
                async with self.db.transaction() as conn:
                    await budget_repo.release(conn, held)
