"""SQL for the fleet's provider budget (migration 0015): take capacity, give leases back, renew them, pause
for a provider's Retry-After, and read every budget's state for /metrics and GET /pipeline."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection


@dataclass(frozen=True)
class Limits:
    """Per minute and at once; 0 = unlimited."""

    rpm: int = 0
    tpm: int = 0
    concurrent: int = 0


@dataclass(frozen=True)
class Taken:
    granted: int  # how many of the callers (in order) may call now
    lease_ids: list[int]  # one per granted caller when concurrency is limited
    requests: float  # what the bucket holds after the grant (negative tokens: in debt)
    tokens: float
    leased: int  # leases live across the fleet
    paused_for: float  # seconds the provider asked everyone to wait (0: not paused)


async def take(
    conn: AsyncConnection,
    key: str,
    kind: str,
    limits: Limits,
    needs: list[int],
    holder: str,
    lease_seconds: float,
    refund: int = 0,
) -> Taken:
    row = (
        await conn.execute(
            text(
                "SELECT * FROM provider_budget_take(:key, :kind, :rpm, :tpm, :concurrent,"
                " CAST(:needs AS bigint[]), :holder, :lease_seconds, :refund)"
            ),
            {
                "key": key,
                "kind": kind,
                "rpm": float(limits.rpm),
                "tpm": float(limits.tpm),
                "concurrent": limits.concurrent,
                "needs": needs,
                "holder": holder,
                "lease_seconds": lease_seconds,
                "refund": refund,
            },
        )
    ).one()
    return Taken(row.granted, list(row.lease_ids or []), row.requests, row.tokens, row.leased, row.paused_for)


async def release(conn: AsyncConnection, lease_ids: list[int]) -> None:
    await conn.execute(text("DELETE FROM provider_leases WHERE id = ANY(CAST(:ids AS bigint[]))"), {"ids": lease_ids})


async def renew(conn: AsyncConnection, holder: str, lease_seconds: float) -> int:
    """Push back the expiry of every lease this holder still has; returns how many it has."""
    result = await conn.execute(
        text(
            "UPDATE provider_leases SET expires_at = clock_timestamp() + make_interval(secs => :seconds)"
            " WHERE holder = :holder"
        ),
        {"holder": holder, "seconds": lease_seconds},
    )
    return result.rowcount or 0


async def pause(conn: AsyncConnection, key: str, kind: str, seconds: float) -> None:
    """The provider answered 429 with Retry-After: nobody of the fleet calls it before then."""
    await conn.execute(
        text(
            "INSERT INTO provider_budgets AS b (id, kind, requests, tokens, refilled_at, window_start,"
            " paused_until, rate_limited)"
            " VALUES (:key, :kind, 0, 0, clock_timestamp(), clock_timestamp(),"
            " clock_timestamp() + make_interval(secs => :seconds), 1)"
            " ON CONFLICT (id) DO UPDATE SET rate_limited = b.rate_limited + 1,"
            " paused_until = greatest(b.paused_until, EXCLUDED.paused_until)"
        ),
        {"key": key, "kind": kind, "seconds": seconds},
    )


async def states(conn: AsyncConnection, keys: list[str]) -> list[dict]:
    """Each budget's use: requests and tokens granted in the current minute, leases live, pause left."""
    rows = await conn.execute(
        text(
            "SELECT id AS key, kind, requests, tokens,"
            " CASE WHEN window_start > clock_timestamp() - interval '60 seconds' THEN window_requests ELSE 0 END"
            "   AS window_requests,"
            " CASE WHEN window_start > clock_timestamp() - interval '60 seconds' THEN window_tokens ELSE 0 END"
            "   AS window_tokens,"
            " (SELECT count(*) FROM provider_leases l WHERE l.budget_key = b.id"
            "   AND l.expires_at >= clock_timestamp()) AS leased,"
            " greatest(0, coalesce(extract(epoch FROM paused_until - clock_timestamp()), 0))::double precision"
            "   AS paused_for,"
            " rate_limited"
            " FROM provider_budgets b WHERE id = ANY(CAST(:keys AS text[])) ORDER BY id"
        ),
        {"keys": keys},
    )
    return [dict(r._mapping) for r in rows]
