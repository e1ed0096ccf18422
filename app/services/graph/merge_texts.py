"""The texts a curation merge writes: descriptions summarised by the LLM (looked up while planning, made
outside the locks when possible), and the rules for the ids and the type the merged entity keeps."""

from __future__ import annotations

import asyncio

from sqlalchemy.ext.asyncio import AsyncConnection

from app.core.errors import first_failure
from app.services.cached_llm import CacheBatch
from app.services.graph.summaries import Summarizer


def limit_ids(ids: list[str], cap: int, method: str) -> list[str]:
    """KEEP keeps the oldest `cap` ids, FIFO the newest (MAX_SOURCE_IDS_PER_* with SOURCE_IDS_LIMIT_METHOD)."""
    if len(ids) <= cap:
        return ids
    return ids[:cap] if method == "KEEP" else ids[-cap:]


def first_known_type(types: list[str]) -> str:
    for value in types:
        if value and value.lower() != "unknown":
            return value
    return "unknown"


class MergeTexts:
    """The LLM-written descriptions of one merge, by their input. Planning only looks them up and notes
    the missing ones; `write` then asks the LLM for those, normally with no transaction open."""

    def __init__(self, summarizer: Summarizer, project_id: str) -> None:
        self.summarizer = summarizer
        self.project_id = project_id
        self.known: dict[tuple, str] = {}
        self.wanted: dict[tuple, None] = {}
        self.batches: list[CacheBatch] = []

    def get(self, kind: str, name: str, parts: list[str], language: str) -> str:
        key = (kind, name, tuple(parts), language)
        if key in self.known:
            return self.known[key]
        self.wanted[key] = None
        return ""  # a placeholder: a plan with wanted texts is never written

    async def write(self, conn: AsyncConnection | None = None) -> None:
        """Make the wanted texts. With `conn` (a transaction holding locks) cache lookups use it and the
        answers are kept for `flush`, after that transaction."""
        wanted, self.wanted = list(self.wanted), {}
        if not wanted:
            return
        batch = None
        if conn is not None:
            batch = self.summarizer.cache.batch(self.project_id, conn)
            self.batches.append(batch)
        try:  # a failure cancels the others, so none writes to a batch after its flush
            async with asyncio.TaskGroup() as group:
                tasks = [
                    group.create_task(
                        self.summarizer.summarize(
                            "entity" if kind == "entity" else "relation",
                            name,
                            list(parts),
                            language,
                            project_id=self.project_id,
                            batch=batch,
                        )
                    )
                    for kind, name, parts, language in wanted
                ]
        except* Exception as errors:
            raise first_failure(errors) from None
        self.known.update(zip(wanted, (t.result() for t in tasks), strict=True))

    async def flush(self) -> None:
        for batch in self.batches:
            await batch.flush_best_effort("merge")
        self.batches.clear()
