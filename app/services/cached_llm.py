"""LLM calls through the per-project response cache.

Keys hash the model, the provider's base URL and the full request (length-prefixed parts, as the official
cache does), so a model or provider change misses and identical chunk content in another document hits.
Without LLM_BASE_URL (the SDK's default endpoint) the key is the one used before the base URL counted, so
those entries stay readable; entries written through a base URL before it counted are no longer looked up
(one new call each when a chunk is extracted again), but they stay in the table for the chunks that list
them in `extraction_cache_keys`, which deletion rebuilds read by key. A lookup and a write each
use their own short transaction: an LLM call never runs inside a caller's open transaction.
Identical requests that miss at the same time in one process share one LLM call (single flight), so
repeated chunks of a document cost one extraction, not one per copy.

The container owns one `CachedLLM` per process (app/wiring.py); callers describe each call with a
`ChatRequest`. A pipeline stage that makes many calls passes a `CacheBatch`: its lookups are answered from one
prefetch and its answers are written in one statement by `flush`, inside the stage's own transaction.
With a fast LLM, a lookup and a write per call were half of all database round trips of ingestion.
A caller that holds locks in an open transaction passes that transaction's connection to its batch, so
it never waits for a second pooled connection (the pool may be full of requests queued on its locks).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncConnection

from app.core import metrics
from app.db.engine import Database
from app.domain.chat import Message
from app.providers.llm import PRIORITY_EXTRACT, LLMClient, LLMResult
from app.repositories import llm_cache as repo

log = logging.getLogger(__name__)


@dataclass
class CachedResult:
    text: str
    key: str
    hit: bool
    truncated: bool = False  # cut by the output-token limit: returned but not cached


class CacheBatch:
    """Cache reads and writes of one pipeline stage, batched: `prefetch` the keys the stage will ask
    for, make the calls with `batch=`, then `flush` the new answers (in the caller's transaction)."""

    def __init__(self, cache: CachedLLM, project_id: str, conn: AsyncConnection | None = None) -> None:
        """`conn`: look up on this connection (the caller's transaction) instead of a pooled one. Flush
        such a batch after that transaction has ended: a pipeline stage writes cache rows before taking
        its key locks, so writing them while holding key locks could deadlock with it."""
        self.cache = cache
        self.db = cache.db
        self.project_id = project_id
        self.conn = conn
        self._conn_lock = asyncio.Lock()  # concurrent calls share `conn`, which runs one statement at a time
        self.known: dict[str, str] = {}  # key -> cached answer
        self.absent: set[str] = set()  # keys known not to be cached
        self.pending: list[dict] = []  # answers to write

    @contextlib.asynccontextmanager
    async def reader(self) -> AsyncIterator[AsyncConnection]:
        """A connection for lookups: the caller's, if it gave one, else a short pooled one."""
        if self.conn is None:
            async with self.db.connect(seen_by_client=False) as conn:
                yield conn
            return
        async with self._conn_lock:
            yield self.conn

    async def prefetch(self, keys: list[str]) -> None:
        wanted = [k for k in dict.fromkeys(keys) if k not in self.known and k not in self.absent]
        if not wanted:
            return
        async with self.reader() as conn:
            rows = await repo.get_many(conn, self.project_id, wanted)
        for key in wanted:
            if key in rows:
                self.known[key] = rows[key]["response"]
            else:
                self.absent.add(key)

    @contextlib.asynccontextmanager
    async def flushed_on_failure(self) -> AsyncIterator[None]:
        """If the block fails, still write the answers that did arrive (a retry will not ask again)."""
        try:
            yield
        except BaseException:
            with contextlib.suppress(Exception):
                await self.flush()
            raise

    async def flush_best_effort(self, who: str) -> None:
        """Flush after the caller's own work has committed: a failure then costs only these cache rows."""
        count = len(self.pending)
        try:
            await self.flush()
        except Exception as exc:
            log.warning("%s: could not cache %d answers: %s", who, count, type(exc).__name__)

    async def flush(self, conn: AsyncConnection | None = None) -> None:
        """Write the answers gathered so far: in `conn`'s transaction, else in a short one of its own."""
        rows, self.pending = self.pending, []
        if not rows:
            return
        try:
            if conn is not None:
                await repo.put_many(conn, self.project_id, rows)
            else:
                async with self.db.transaction(seen_by_client=False) as own:
                    await repo.put_many(own, self.project_id, rows)
        finally:
            for row in rows:
                self.cache._unflushed.pop((self.project_id, row["key"]), None)


class _LeaderGone(Exception):
    """The call that identical requests were waiting for was cancelled."""


def cache_key(cache_type: str, model: str | None, *parts: str) -> str:
    """`{cache_type}:{md5 of "len:value" for the model and every part}`."""
    payload = "".join(f"{len(p)}:{p}" for p in (model or "", *parts))
    return f"{cache_type}:{hashlib.md5(payload.encode('utf-8')).hexdigest()}"


def provider_identity(model: str | None, base_url: str | None) -> str:
    """What the cache key records of the provider: the model, and the base URL when one is set (trailing
    slash and case of scheme and host do not matter). Two endpoints serving one model name may answer
    differently (a local server and a hosted one), so they must not share answers."""
    url = (base_url or "").strip().rstrip("/")
    if not url:
        return model or ""
    scheme, sep, rest = url.partition("://")
    if sep:
        host, slash, path = rest.partition("/")
        url = f"{scheme.lower()}://{host.lower()}{slash}{path}"
    return f"{model or ''}@{url}"


def llm_identity(llm: LLMClient) -> str:
    """`provider_identity` of a client: pass it as the `model` of `cache_key` / `messages_key`."""
    return provider_identity(llm.model, llm.settings.llm_base_url)


def messages_key(cache_type: str, model: str | None, messages: list[Message], *, json_mode: bool = False) -> str:
    canonical = json.dumps([{"role": m["role"], "content": m["content"]} for m in messages], ensure_ascii=False)
    return cache_key(cache_type, model, "json" if json_mode else "text", canonical)


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One chat call through the cache. `use_cache=False` asks the LLM and neither reads nor writes the
    cache. `known_absent`: the caller knows the key cannot be cached yet (its messages embed an answer the
    LLM just gave), so the lookup is skipped."""

    cache_type: str
    messages: list[Message]
    operation: str
    priority: int = PRIORITY_EXTRACT
    json_mode: bool = False
    use_cache: bool = True
    # JSON-schema output (providers.llm.json_schema_format); the messages asking for it differ anyway
    response_format: dict | None = None
    known_absent: bool = False


class CachedLLM:
    """The LLM behind the per-project response cache, with the process's single-flight table."""

    def __init__(self, db: Database, llm: LLMClient) -> None:
        self.db = db
        self.llm = llm
        # (project_id, key) -> the answer of the call in progress
        self._in_flight: dict[tuple[str, str], asyncio.Future[CachedResult]] = {}
        # answers held by a CacheBatch until its flush: other callers in this process see them as cached
        self._unflushed: dict[tuple[str, str], str] = {}

    def batch(self, project_id: str, conn: AsyncConnection | None = None) -> CacheBatch:
        """A batch for one pipeline stage (see CacheBatch); `conn`: look up on the caller's transaction."""
        return CacheBatch(self, project_id, conn)

    def key(self, request: ChatRequest) -> str:
        return messages_key(request.cache_type, llm_identity(self.llm), request.messages, json_mode=request.json_mode)

    async def chat(self, project_id: str, request: ChatRequest, batch: CacheBatch | None = None) -> CachedResult:
        """The cached answer, else the LLM's (then cached, in `batch` if given)."""
        key = self.key(request)
        if not request.use_cache:
            result = await self._ask(request)
            return CachedResult(result.text, key, False, result.finish_reason == "length")
        flight = (project_id, key)
        skip_lookup = request.known_absent
        while True:
            found = await self._lookup(project_id, request.cache_type, key, batch, skip_lookup)
            if found is not None:
                return found
            pending = self._in_flight.get(flight)
            if pending is None:
                return await self._lead(project_id, request, key, batch)
            try:
                shared = await asyncio.shield(pending)
            except _LeaderGone:  # the caller that was asking was cancelled: ask again ourselves
                skip_lookup = False
                continue
            metrics.CACHE_EVENTS.labels(request.cache_type, "hit").inc()
            return CachedResult(shared.text, key, True, shared.truncated)

    async def _lookup(
        self, project_id: str, cache_type: str, key: str, batch: CacheBatch | None, skip_lookup: bool
    ) -> CachedResult | None:
        """The answer already known to the batch, this process or the database; None on a miss. The
        database is not asked while an identical call is in flight: its answer is awaited instead."""
        flight = (project_id, key)
        known = batch.known.get(key) if batch is not None else None
        if known is None:
            known = self._unflushed.get(flight)
        if known is not None:
            metrics.CACHE_EVENTS.labels(cache_type, "hit").inc()
            return CachedResult(known, key, True)
        if skip_lookup or (batch is not None and key in batch.absent) or flight in self._in_flight:
            return None
        async with batch.reader() if batch is not None else self.db.connect(seen_by_client=False) as conn:
            row = await repo.get(conn, project_id, key)
        if row is None:
            return None
        metrics.CACHE_EVENTS.labels(cache_type, "hit").inc()
        return CachedResult(row["response"], key, True)

    async def _ask(self, request: ChatRequest) -> LLMResult:
        return await self.llm.chat(
            request.messages,
            operation=request.operation,
            priority=request.priority,
            json_mode=request.json_mode,
            response_format=request.response_format,
        )

    async def _lead(self, project_id: str, request: ChatRequest, key: str, batch: CacheBatch | None) -> CachedResult:
        """Ask the LLM for everyone waiting on this key, and store the answer unless it was cut short."""
        metrics.CACHE_EVENTS.labels(request.cache_type, "miss").inc()
        flight = (project_id, key)
        future: asyncio.Future[CachedResult] = asyncio.get_running_loop().create_future()
        self._in_flight[flight] = future
        try:
            result = await self._ask(request)
            answer = CachedResult(result.text, key, False, result.finish_reason == "length")
            if not answer.truncated:
                row = {
                    "key": key,
                    "cache_type": request.cache_type,
                    "model": self.llm.model,
                    "response": result.text,
                    "prompt_tokens": result.prompt_tokens,
                    "completion_tokens": result.completion_tokens,
                }
                if batch is not None:
                    batch.pending.append(row)
                    batch.known[key] = result.text
                    self._unflushed[flight] = result.text
                else:
                    async with self.db.transaction(seen_by_client=False) as conn:
                        await repo.put_many(conn, project_id, [row])
        except BaseException as exc:
            future.set_exception(exc if isinstance(exc, Exception) else _LeaderGone())
            future.exception()  # mark retrieved: with no follower waiting, asyncio must not log it
            raise
        else:
            future.set_result(answer)
            return answer
        finally:
            del self._in_flight[flight]
