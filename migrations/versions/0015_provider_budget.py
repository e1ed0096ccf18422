"""One provider budget for the whole fleet: a token bucket per provider (kind, base URL, model) shared by every
API and worker process, and leases for calls in flight that expire by themselves when their holder dies.

`provider_budget_take` grants waiting callers in order, in one round trip: it refills the bucket by the time
elapsed, admits as many callers as the requests, tokens and free leases allow (a caller needing more tokens
than one second's share is admitted when the bucket is full and leaves it in debt), inserts their leases and
applies the token corrections (estimate minus real usage) the process collected since its last call. The
bucket row is locked for the few microseconds this takes, so concurrent takers see each other's grants.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

_TAKE = """
CREATE OR REPLACE FUNCTION provider_budget_take(
    p_key text, p_kind text, p_rpm double precision, p_tpm double precision, p_concurrent integer,
    p_needs bigint[], p_holder text, p_lease_seconds double precision, p_refund bigint
) RETURNS TABLE (
    granted integer, lease_ids bigint[], requests double precision, tokens double precision,
    leased integer, paused_for double precision
) LANGUAGE plpgsql AS $$
DECLARE
    b provider_budgets%ROWTYPE;
    at timestamptz := clock_timestamp();
    elapsed double precision;
    req_cap double precision := greatest(1, p_rpm / 60);
    tok_cap double precision := greatest(1, p_tpm / 60);
    req double precision;
    tok double precision;
    live integer := 0;
    n integer := 0;
    need bigint;
    lease_id bigint;
    ids bigint[] := '{}';
    used_tokens bigint := 0;
BEGIN
    INSERT INTO provider_budgets (id, kind, requests, tokens, refilled_at, window_start)
    VALUES (p_key, p_kind, req_cap, tok_cap, at, at) ON CONFLICT (id) DO NOTHING;
    SELECT * INTO b FROM provider_budgets WHERE id = p_key FOR UPDATE;
    elapsed := greatest(0, extract(epoch FROM at - b.refilled_at));
    -- the sustained rate leaves out two seconds' share: the burst, and a second for the time between a grant
    -- and its request's arrival, so that no 60-second window of arrivals holds more than the limit
    req := least(req_cap, b.requests + elapsed * greatest(p_rpm - 2 * req_cap, p_rpm / 60) / 60);
    tok := least(tok_cap, b.tokens + p_refund + elapsed * greatest(p_tpm - 2 * tok_cap, p_tpm / 60) / 60);
    IF p_concurrent > 0 THEN
        DELETE FROM provider_leases WHERE budget_key = p_key AND expires_at < at;
        SELECT count(*) INTO live FROM provider_leases WHERE budget_key = p_key;
    END IF;
    IF b.paused_until IS NULL OR b.paused_until <= at THEN
        FOREACH need IN ARRAY p_needs LOOP
            EXIT WHEN p_rpm > 0 AND req < 1;
            EXIT WHEN p_tpm > 0 AND tok < least(need, tok_cap);
            EXIT WHEN p_concurrent > 0 AND live >= p_concurrent;
            req := req - 1;
            tok := tok - need;
            used_tokens := used_tokens + need;
            n := n + 1;
            IF p_concurrent > 0 THEN
                live := live + 1;
                INSERT INTO provider_leases (budget_key, holder, expires_at)
                VALUES (p_key, p_holder, at + make_interval(secs => p_lease_seconds))
                RETURNING id INTO lease_id;
                ids := ids || lease_id;
            END IF;
        END LOOP;
    END IF;
    IF b.window_start <= at - interval '60 seconds' THEN
        b.window_start := at;
        b.window_requests := 0;
        b.window_tokens := 0;
    END IF;
    UPDATE provider_budgets SET
        requests = CASE WHEN p_rpm > 0 THEN req ELSE req_cap END,
        tokens = CASE WHEN p_tpm > 0 THEN tok ELSE tok_cap END,
        refilled_at = at,
        window_start = b.window_start,
        window_requests = b.window_requests + n,
        window_tokens = greatest(0, b.window_tokens + used_tokens - p_refund),
        leased = live,
        updated_at = at
    WHERE id = p_key;
    RETURN QUERY SELECT n, ids, req, tok, live,
        greatest(0, coalesce(extract(epoch FROM b.paused_until - at), 0))::double precision;
END;
$$
"""


def upgrade() -> None:
    op.create_table(
        "provider_budgets",
        sa.Column("id", sa.Text, nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("requests", sa.Float, nullable=False),
        sa.Column("tokens", sa.Float, nullable=False),
        sa.Column("refilled_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("paused_until", sa.DateTime(timezone=True)),
        sa.Column("window_start", sa.DateTime(timezone=True), nullable=False),
        sa.Column("window_requests", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("window_tokens", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("leased", sa.Integer, nullable=False, server_default="0"),
        sa.Column("rate_limited", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.PrimaryKeyConstraint("id", name="pk_provider_budgets"),
    )
    op.create_table(
        "provider_leases",
        sa.Column("id", sa.BigInteger, sa.Identity(), nullable=False),
        sa.Column("budget_key", sa.Text, nullable=False),
        sa.Column("holder", sa.Text, nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_provider_leases"),
        sa.ForeignKeyConstraint(
            ["budget_key"],
            ["provider_budgets.id"],
            ondelete="CASCADE",
            name="fk_provider_leases_budget_key_provider_budgets",
        ),
    )
    op.create_index("ix_provider_leases_budget_key", "provider_leases", ["budget_key"])
    op.create_index("ix_provider_leases_holder", "provider_leases", ["holder"])
    op.execute(_TAKE)


def downgrade() -> None:
    op.execute("DROP FUNCTION IF EXISTS provider_budget_take")
    op.drop_table("provider_leases")
    op.drop_table("provider_budgets")
