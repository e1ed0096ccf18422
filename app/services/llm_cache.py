"""LLM calls through the per-project response cache.

Keys hash the model and the full request (length-prefixed parts, as the official cache does), so a
model change misses and identical chunk content in another document hits. A lookup and a write each
use their own short transaction: an LLM call never runs inside a caller's open transaction.
"""

from __future__ import annotations

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
    if enabled:
        async with db.connect() as conn:
            row = await repo.get(conn, project_id, key)
        metrics.CACHE_EVENTS.labels(cache_type, "hit" if row else "miss").inc()
        if row is not None:
            return CachedResult(row["response"], key, True)
    result = await llm.chat(messages, operation=operation, priority=priority, json_mode=json_mode)
    truncated = result.finish_reason == "length"
    if enabled and not truncated:
        async with db.transaction() as conn:
            await repo.put(conn, project_id, key, cache_type, llm.model, result.text,
                           result.prompt_tokens, result.completion_tokens)
    return CachedResult(result.text, key, False, truncated)
