"""The fleet's provider budget: processes sharing one database never exceed the requests per minute, tokens per
minute and calls at once it allows; a 429's Retry-After pauses all of them; a killed holder's lease frees
itself; and with no budget set nothing is asked of the database per call.

Each "process" here is an engine of its own (its own connection pool, budget gates and provider clients) on
the test's database; the fleet test adds a real worker process. The fake provider counts requests per window
and answers 429 above a limit chosen with a wide margin over what the budget allows."""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
from sqlalchemy import event

from app.core.config import Settings
from app.db.engine import Database, async_url
from app.providers.budget import BudgetWaitTimeout, estimate_tokens, reported_tokens, retry_after_seconds
from app.providers.embeddings import EmbeddingClient
from app.providers.llm import LLMClient
from app.providers.rerank_breaker import RerankService
from app.providers.tokenizer import get_tokenizer
from app.repositories import provider_budget as budget_repo
from app.repositories.provider_budget import Limits
from app.services.budget.fleet import FleetBudget
from tests.support.fakes.rerank_server import FakeRerank
from tests.support.faults import until

ROOT = Path(__file__).resolve().parents[2]
MESSAGES = [{"role": "user", "content": "Who is Alice Hart?"}]


@dataclass
class Process:
    """What one API or worker process holds: its own pool, budget and clients."""

    db: Database
    budget: FleetBudget
    llm: LLMClient
    embedder: EmbeddingClient

    async def close(self) -> None:
        await self.llm.close()
        await self.embedder.close()
        await self.budget.close()
        await self.db.close()


@pytest.fixture
async def processes(database_url: str) -> AsyncIterator[Callable[[Settings], Any]]:
    started: list[Process] = []

    async def start(settings: Settings) -> Process:
        db = Database(async_url(database_url), pool_size=2)
        budget = FleetBudget(settings, db)
        budget.start()
        tokenizer = get_tokenizer()
        process = Process(
            db,
            budget,
            LLMClient(settings, tokenizer, budget.gate("chat")),
            EmbeddingClient(settings, tokenizer, budget.gate("embeddings")),
        )
        started.append(process)
        return process

    yield start
    for process in started:
        await process.close()


# ----- the parts -----


def test_retry_after_in_seconds_milliseconds_or_as_a_date():
    now = time.time()
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert retry_after_seconds(httpx2.Headers({"retry-after": "7"})) == 7
    assert retry_after_seconds(httpx2.Headers({"retry-after": "1.5"})) == 1.5
    assert retry_after_seconds(httpx2.Headers({"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    assert 28 <= (retry_after_seconds(httpx2.Headers({"retry-after": date}), now) or 0) <= 31
    assert retry_after_seconds(httpx2.Headers({"retry-after": "soon"})) is None
    assert retry_after_seconds(httpx2.Headers({})) is None
    past = email.utils.formatdate(now - 60, usegmt=True)
    assert retry_after_seconds(httpx2.Headers({"retry-after": past})) == 0


def test_token_estimate_and_reported_usage():
    body = b'{"model":"m","messages":[{"role":"user","content":"\\"max_tokens\\": 99"}],"max_tokens":400}'
    assert estimate_tokens(body) == len(body) // 4 + 400
    answer = b'{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":30,"total_tokens":42}}'
    assert reported_tokens(answer) == 42
    assert reported_tokens(b'{"data":[],"usage":{"prompt_tokens":17}}') == 17
    assert reported_tokens(b'{"choices":[]}') is None


async def test_bucket_grants_a_burst_then_refills_in_debt_and_pauses(database_url):
    db = Database(async_url(database_url), pool_size=1)
    try:
        async with db.transaction() as conn:
            first = await budget_repo.take(conn, "chat a", "chat", Limits(rpm=600), [1] * 16, "me", 30)
            again = await budget_repo.take(conn, "chat a", "chat", Limits(rpm=600), [1], "me", 30)
        assert first.granted == 10  # one second's share of 600 per minute
        assert again.granted == 0
        async with db.transaction() as conn:
            tokens = await budget_repo.take(conn, "chat t", "chat", Limits(tpm=6000), [60, 60], "me", 30)
            big = await budget_repo.take(conn, "chat u", "chat", Limits(tpm=6000), [500, 1], "me", 30)
        assert tokens.granted == 1  # 100 tokens a second: the second 60 must wait
        assert big.granted == 1 and big.tokens < -300  # larger than the bucket: let through when full, in debt
        async with db.transaction() as conn:
            await budget_repo.pause(conn, "chat p", "chat", 30)
            paused = await budget_repo.take(conn, "chat p", "chat", Limits(rpm=6000), [1], "me", 30)
        assert paused.granted == 0 and 28 < paused.paused_for <= 30
        async with db.transaction() as conn:
            leased = await budget_repo.take(conn, "chat l", "chat", Limits(concurrent=2), [1, 1, 1], "me", 30)
            await budget_repo.release(conn, leased.lease_ids[:1])
            after = await budget_repo.take(conn, "chat l", "chat", Limits(concurrent=2), [1, 1], "me", 30)
        assert leased.granted == 2 and len(leased.lease_ids) == 2
        assert after.granted == 1
    finally:
        await db.close()


async def test_waiting_is_bounded_and_cancellable(make_settings, processes):
    settings = make_settings(llm_max_concurrent_fleet=1, provider_budget_max_wait=0.3)
    p = await processes(settings)
    gate = p.budget.gate("chat")
    held = await gate.admit(10)
    with pytest.raises(BudgetWaitTimeout):
        await gate.admit(10)
    waiting = asyncio.create_task(gate.admit(10))
    await asyncio.sleep(0.1)
    waiting.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await waiting
    await gate.done(held, None)
    again = await gate.admit(10)  # neither the timed-out nor the cancelled caller kept a lease
    assert again.lease_id is not None
    await gate.done(again, None)
    async with p.db.connect() as conn:
        assert (await budget_repo.states(conn, [gate.key]))[0]["leased"] == 0


async def test_no_budget_no_database_round_trip(make_settings, start_app):
    c = (await start_app(make_settings(worker_enabled=False))).container
    assert c.budget.gates == {}
    statements: list[str] = []

    def count(*args: Any) -> None:
        statements.append(args[2])

    event.listen(c.db.engine.sync_engine, "before_cursor_execute", count)
    try:
        await c.llm.chat(MESSAGES, operation="query")
        await c.embedder.embed(["one text", "another"])
    finally:
        event.remove(c.db.engine.sync_engine, "before_cursor_execute", count)
    assert statements == []


# ----- the fleet -----


async def test_engines_sharing_a_budget_stay_under_it(make_settings, processes, fake_llm):
    # 600 a minute: bursts of 10, then ~9.8 a second. The fake refuses past 25 in any second: a wide margin
    # over what the budget lets through, far under what the engines send without it (hundreds a second).
    settings = make_settings(llm_rpm=600, llm_tpm=600_000, embedding_rpm=600, llm_max_concurrent_fleet=6)
    fake_llm.rate_limit, fake_llm.rate_window = 25, 1.0
    fleet = [await processes(settings) for _ in range(3)]

    async def hammer(p: Process) -> None:
        calls = [p.llm.chat(MESSAGES, operation="query") for _ in range(12)]
        embeds = [p.embedder.embed([f"text {i}"]) for i in range(6)]
        await asyncio.gather(*calls, *embeds)

    await asyncio.gather(*(hammer(p) for p in fleet))
    assert fake_llm.over_limit == 0
    assert len(fake_llm.arrivals["chat"]) == 36 and len(fake_llm.arrivals["embeddings"]) == 18
    assert fake_llm.most_in_window(1.0) <= 25
    assert fake_llm.peak_in_flight <= 6
    use = {u["kind"]: u for u in await fleet[0].budget.use()}
    assert use["chat"]["requests_this_minute"] >= 36 and use["chat"]["in_flight"] == 0


def _spawn_worker(database_url: str, fake_url: str, log: Path, limits: dict[str, str]) -> subprocess.Popen:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "LLM_BASE_URL": fake_url,
        "LLM_MODEL": "fake-llm",
        "LLM_API_KEY": "k",
        "EMBEDDING_MODEL": "fake-embedding",
        "EMBEDDING_DIM": "64",
        "WORKER_POLL_INTERVAL": "0.05",
        "WORKER_PORT": "0",
        "LOG_LEVEL": "INFO",
        **limits,
    }
    with log.open("wb") as sink:
        return subprocess.Popen(
            [sys.executable, "-m", "app.worker"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=sink
        )


@pytest.mark.slow
async def test_a_worker_process_and_engines_share_one_budget(
    make_settings, processes, start_app, fake_llm, database_url, tmp_path
):
    limits = {"LLM_RPM": "600", "EMBEDDING_RPM": "600", "LLM_MAX_CONCURRENT_FLEET": "4"}
    settings = make_settings(llm_rpm=600, embedding_rpm=600, llm_max_concurrent_fleet=4, worker_enabled=False)
    fake_llm.rate_limit, fake_llm.rate_window = 25, 1.0
    fake_llm.latency = 0.02
    app = await start_app(settings)
    log = tmp_path / "worker.log"
    worker = _spawn_worker(database_url, fake_llm.url, log, limits)
    try:
        texts = [f"Alice Hart met Bob Stone {i} times in Boston. Carol Diaz wrote to Dan Ruiz." for i in range(6)]
        response = await app.http.post("/documents", json={"documents": [{"text": t} for t in texts]})
        assert response.status_code in (200, 202), response.text
        engines = [await processes(settings) for _ in range(2)]
        await asyncio.gather(*(p.llm.chat(MESSAGES, operation="query") for p in engines for _ in range(15)))

        async def finished() -> bool:
            body = (await app.http.get("/pipeline")).json()
            return body["by_status"]["processed"] == len(texts)

        await until(finished, limit=120)
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    assert fake_llm.over_limit == 0
    assert len(fake_llm.arrivals["chat"]) > 30
    assert fake_llm.most_in_window(1.0) <= 25
    assert fake_llm.peak_in_flight <= 4


async def test_a_429_with_retry_after_pauses_every_process(make_settings, processes, fake_llm):
    settings = make_settings(llm_rpm=6000)
    first, second = await processes(settings), await processes(settings)
    fake_llm.fail_next(1, status=429, retry_after="2")
    blocked = asyncio.create_task(first.llm.chat(MESSAGES, operation="query"))

    async def paused() -> bool:
        return any(u["paused_for_seconds"] > 0 for u in await second.budget.use())

    await until(paused, limit=30)
    refused_at = fake_llm.arrivals["chat"][0]
    await second.llm.chat(MESSAGES, operation="query")  # another process: waits for the pause too
    await blocked
    later = [at - refused_at for at in fake_llm.arrivals["chat"][1:]]
    assert len(later) == 2
    assert min(later) >= 1.5  # nobody called the provider during its Retry-After (2 s; margin for clocks)
    use = (await second.budget.use())[0]
    assert use["rate_limited"] == 1


def _lease_holder(database_url: str, key: str) -> subprocess.Popen:
    """A process that takes the only lease of `key` (for 2 s, never renewed) and waits to be killed."""
    script = (
        "import asyncio, sys\n"
        "from app.db.engine import Database, async_url\n"
        "from app.repositories import provider_budget as r\n"
        "async def main():\n"
        "    db = Database(async_url(sys.argv[1]), pool_size=1)\n"
        "    async with db.transaction() as c:\n"
        "        t = await r.take(c, sys.argv[2], 'chat', r.Limits(concurrent=1), [1], 'doomed', 2.0)\n"
        "    print(t.granted, flush=True)\n"
        "    await asyncio.sleep(600)\n"
        "asyncio.run(main())\n"
    )
    return subprocess.Popen(
        [sys.executable, "-c", script, database_url, key], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )


async def test_a_killed_holders_lease_frees_itself(make_settings, processes, database_url):
    settings = make_settings(llm_max_concurrent_fleet=1, provider_budget_max_wait=60)
    p = await processes(settings)
    gate = p.budget.gate("chat")
    holder = _lease_holder(database_url, gate.key)
    try:
        assert (await asyncio.to_thread(holder.stdout.readline)).strip() == "1"
        holder.kill()  # SIGKILL: no clean-up, its lease stays in the table
        holder.wait(timeout=10)
        async with p.db.transaction() as conn:
            assert (await budget_repo.take(conn, gate.key, "chat", gate.limits, [1], "probe", 1)).granted == 0
        admitted = await gate.admit(1)  # once the dead holder's lease has expired (2 s)
        assert admitted.lease_id is not None
        await gate.done(admitted, None)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(timeout=10)


async def test_budget_use_in_pipeline_and_metrics(make_settings, start_app):
    settings = make_settings(llm_rpm=600, llm_tpm=100_000, llm_max_concurrent_fleet=3, worker_enabled=False)
    app = await start_app(settings)
    response = await app.http.post("/query", json={"query": "Who is Alice Hart?", "mode": "bypass"})
    assert response.status_code == 200, response.text
    budget = (await app.http.get("/pipeline")).json()["budget"]
    assert [b["kind"] for b in budget] == ["chat"]
    chat = budget[0]
    assert chat["rpm"] == 600 and chat["tpm"] == 100_000 and chat["max_concurrent"] == 3
    assert chat["requests_this_minute"] == 1 and chat["in_flight"] == 0
    assert chat["tokens_this_minute"] > 4000  # estimated: the request's bytes / 4 plus its max_tokens (4000)
    assert chat["model"] == "fake-llm" and "http" not in str(chat)  # no provider URL
    text = (await app.http.get("/metrics")).text
    assert 'provider_budget_window_requests{kind="chat"} 1.0' in text
    assert 'provider_budget_leases{kind="chat"} 0.0' in text


async def test_rerank_calls_share_the_fleets_concurrency(make_settings, processes):
    fake = FakeRerank(latency=0.2).start()
    try:
        settings = make_settings(
            rerank_binding="jina", rerank_binding_host=fake.url, rerank_max_concurrent_fleet=1, rerank_timeout=30
        )
        services = []
        for _ in range(2):
            p = await processes(settings)
            services.append(RerankService(settings, budget=p.budget.gate("rerank")))
        outcomes = await asyncio.gather(
            *(s.rerank("alice hart", ["bob", "alice hart", "carol"], 2) for s in services for _ in range(3))
        )
        for service in services:
            await service.close()
    finally:
        fake.stop()
    assert all(o.order is not None and o.order[0][0] == 1 for o in outcomes)
    assert sum(fake.hits.values()) == 6 and fake.peak_in_flight == 1


async def test_a_streamed_answer_holds_its_lease_until_it_ends(make_settings, processes, fake_llm):
    p = await processes(make_settings(llm_max_concurrent_fleet=2, llm_tpm=100_000))
    gate = p.budget.gate("chat")

    async def in_flight() -> int:
        async with p.db.connect() as conn:
            return (await budget_repo.states(conn, [gate.key]))[0]["leased"]

    fake_llm.stream_delay = 0.05
    stream = p.llm.stream(MESSAGES, operation="query")
    first = await anext(stream)
    assert first and await in_flight() == 1
    rest = [piece async for piece in stream]
    assert rest and await in_flight() == 0
    assert gate.held == set()
