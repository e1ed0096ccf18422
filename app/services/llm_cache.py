"""LLM calls through the per-project response cache.

Keys hash the model and the full request (length-prefixed parts, as the official cache does), so a
model change misses and identical chunk content in another document hits. A lookup and a write each
use their own short transaction: an LLM call never runs inside a caller's open transaction.
Identical requests that miss at the same time in one process share one LLM call (single flight), so
repeated chunks of a document cost one extraction, not one per copy.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import dataclass

from app import metrics
from app.db.engine import Database
from app.providers.llm import PRIORITY_EXTRACT, LLMClient, Message
from app.repositories import llm_cache as repo


@dataclass
class CachedResult:
    text: str
    key: str
    hit: bool
    truncated: bool = False  # cut by the output-token limit: returned but not cached


class _LeaderGone(Exception):
    """The call that identical requests were waiting for was cancelled."""


# (id(db), project_id, key) -> the answer of the call in progress
_IN_FLIGHT: dict[tuple[int, str, str], asyncio.Future[CachedResult]] = {}


def cache_key(cache_type: str, model: str | None, *parts: str) -> str:
    """`{cache_type}:{md5 of "len:value" for the model and every part}`."""
    payload = "".join(f"{len(p)}:{p}" for p in (model or "", *parts))
    return f"{cache_type}:{hashlib.md5(payload.encode('utf-8')).hexdigest()}"


def messages_key(cache_type: str, model: str | None, messages: list[Message], *, json_mode: bool = False) -> str:
    canonical = json.dumps([{"role": m["role"], "content": m["content"]} for m in messages], ensure_ascii=False)
    return cache_key(cache_type, model, "json" if json_mode else "text", canonical)


async def cached_chat(
    db: Database,
    llm: LLMClient,
    project_id: str,
    cache_type: str,
    messages: list[Message],
    *,
    operation: str,
    priority: int = PRIORITY_EXTRACT,
    json_mode: bool = False,
    enabled: bool = True,
) -> CachedResult:
    key = messages_key(cache_type, llm.model, messages, json_mode=json_mode)
    if not enabled:
        result = await llm.chat(messages, operation=operation, priority=priority, json_mode=json_mode)
        return CachedResult(result.text, key, False, result.finish_reason == "length")
    flight = (id(db), project_id, key)
    if flight not in _IN_FLIGHT:
        async with db.connect() as conn:
            row = await repo.get(conn, project_id, key)
        if row is not None:
            metrics.CACHE_EVENTS.labels(cache_type, "hit").inc()
            return CachedResult(row["response"], key, True)
    if (pending := _IN_FLIGHT.get(flight)) is not None:
        try:
            shared = await asyncio.shield(pending)
        except _LeaderGone:  # the caller that was asking was cancelled: ask again ourselves
            return await cached_chat(db, llm, project_id, cache_type, messages, operation=operation,
                                     priority=priority, json_mode=json_mode)
        metrics.CACHE_EVENTS.labels(cache_type, "hit").inc()
        return CachedResult(shared.text, key, True, shared.truncated)
    metrics.CACHE_EVENTS.labels(cache_type, "miss").inc()
    future: asyncio.Future[CachedResult] = asyncio.get_running_loop().create_future()
    _IN_FLIGHT[flight] = future
    try:
        result = await llm.chat(messages, operation=operation, priority=priority, json_mode=json_mode)
        answer = CachedResult(result.text, key, False, result.finish_reason == "length")
        if not answer.truncated:
            async with db.transaction() as conn:
                await repo.put(conn, project_id, key, cache_type, llm.model, result.text,
                               result.prompt_tokens, result.completion_tokens)
    except BaseException as exc:
        future.set_exception(exc if isinstance(exc, Exception) else _LeaderGone())
        future.exception()  # mark retrieved: with no follower waiting, asyncio must not log it
        raise
    else:
        future.set_result(answer)
        return answer
    finally:
        del _IN_FLIGHT[flight]
