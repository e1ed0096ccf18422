"""Bridge to the shared LLM cache (`app/services/llm_cache.py`, owned by extraction).

Until that module exists this provides the same `cached_chat` contract with a minimal implementation.
"""

from __future__ import annotations

try:  # pragma: no cover - exercised whichever side exists
    from app.services.llm_cache import cached_chat  # noqa: F401
except ImportError:  # pragma: no cover
    import hashlib
    from dataclasses import dataclass

    from sqlalchemy import select
    from sqlalchemy.dialects.postgresql import insert as pg_insert

    from app import metrics
    from app.db.engine import Database
    from app.db.tables import llm_cache
    from app.providers.llm import LLMClient, Message

    @dataclass
    class CachedResult:
        text: str
        key: str
        hit: bool

    def _key(cache_type: str, model: str, messages: list[Message]) -> str:
        parts = [cache_type, model] + [f"{m['role']}\n{m['content']}" for m in messages]
        digest = hashlib.md5("".join(f"{len(p)}:{p}" for p in parts).encode()).hexdigest()
        return f"{cache_type}:{digest}"

    async def cached_chat(
        db: Database, llm: LLMClient, project_id: str, cache_type: str, messages: list[Message], *,
        operation: str, priority: int, json_mode: bool = False, enabled: bool = True,
    ) -> CachedResult:
        key = _key(cache_type, llm.model, messages)
        if enabled:
            async with db.connect() as conn:
                found = await conn.scalar(select(llm_cache.c.response).where(
                    llm_cache.c.project_id == project_id, llm_cache.c.key == key))
            metrics.CACHE_EVENTS.labels(cache_type, "hit" if found is not None else "miss").inc()
            if found is not None:
                return CachedResult(found, key, True)
        result = await llm.chat(messages, operation=operation, priority=priority, json_mode=json_mode)
        if enabled:
            async with db.transaction() as conn:
                await conn.execute(pg_insert(llm_cache).values(
                    project_id=project_id, key=key, cache_type=cache_type, model=llm.model, response=result.text,
                    prompt_tokens=result.prompt_tokens, completion_tokens=result.completion_tokens,
                ).on_conflict_do_nothing())
        return CachedResult(result.text, key, False)
