"""Per-chunk extraction: first pass plus gleaning passes, every pass through the LLM cache.

The cache keys of all passes are returned in order so the pipeline can store them on the chunk;
`extraction_from_cached` rebuilds the same result from those cached answers without any LLM call.
"""

from __future__ import annotations

import logging
import time

from app import metrics
from app.config import Settings
from app.db.engine import Database
from app.domain.chat import Message
from app.domain.extraction_parser import merge_gleaning, parse_extraction
from app.domain.records import ChunkExtraction
from app.prompts.extraction import extraction_messages, gleaning_messages
from app.providers.llm import PRIORITY_EXTRACT, LLMClient
from app.services.cached_llm import CacheBatch, cached_chat, messages_key

log = logging.getLogger(__name__)

CACHE_TYPE = "extract"


class Extractor:
    def __init__(self, db: Database, llm: LLMClient, settings: Settings) -> None:
        self.db = db
        self.llm = llm
        self.settings = settings

    def _input_tokens(self, messages: list[Message]) -> int:
        return sum(self.llm.tokenizer.count(m["content"]) for m in messages)

    async def _pass(
        self, project_id: str, messages: list[Message], operation: str, batch: CacheBatch | None,
        known_absent: bool = False,
    ):
        return await cached_chat(
            self.db, self.llm, project_id, CACHE_TYPE, messages, operation=operation, priority=PRIORITY_EXTRACT,
            enabled=self.settings.enable_llm_cache_for_extract, batch=batch, known_absent=known_absent,
        )

    def first_pass_key(self, content: str, entity_types: list[str], language: str) -> str:
        """The cache key of a chunk's first extraction pass (to prefetch a document's answers at once)."""
        return messages_key(CACHE_TYPE, self.llm.model, extraction_messages(content, entity_types, language))

    @staticmethod
    def _parse(text: str, chunk_id: str, file_path: str | None, name_limit: int) -> ChunkExtraction:
        started = time.perf_counter()
        try:
            return parse_extraction(text, chunk_id, file_path, name_limit)
        finally:
            metrics.PIPELINE_STAGE_SECONDS.labels("parse").inc(time.perf_counter() - started)

    async def extract_chunk(
        self,
        project_id: str,
        chunk_id: str,
        content: str,
        file_path: str | None,
        *,
        entity_types: list[str],
        language: str,
        max_gleaning: int,
        batch: CacheBatch | None = None,
    ) -> tuple[ChunkExtraction, list[str]]:
        """The chunk's merged extraction and the cache keys of its passes (first pass, then gleanings)."""
        name_limit = self.settings.entity_name_max_length
        messages = extraction_messages(content, entity_types, language)
        answer = await self._pass(project_id, messages, "extract", batch)
        keys = [answer.key]
        result = self._parse(answer.text, chunk_id, file_path, name_limit)
        limit = self.settings.max_extract_input_tokens
        for _ in range(max_gleaning):
            messages = gleaning_messages(messages, answer.text)
            if limit and self._input_tokens(messages) > limit:
                log.info("gleaning skipped for %s: conversation exceeds %d tokens", chunk_id, limit)
                break
            # a gleaning conversation quotes the previous answer: after a fresh answer it cannot be cached
            answer = await self._pass(project_id, messages, "glean", batch, known_absent=not answer.hit)
            keys.append(answer.key)
            glean = self._parse(answer.text, chunk_id, file_path, name_limit)
            result = merge_gleaning(result, glean)
            if not glean.entities and not glean.relations and not glean.malformed:
                break  # the model found nothing more; further passes would only repeat that
        if result.malformed:
            metrics.EXTRACTION_MALFORMED.inc(result.malformed)
            log.warning("chunk %s: %d unparseable extraction record(s) skipped", chunk_id, result.malformed)
        return result, keys


def extraction_from_cached(
    responses: list[str], chunk_id: str, file_path: str | None, name_max_length: int = 500
) -> ChunkExtraction:
    """Re-parse a chunk's cached pass answers (first pass, then gleanings) and merge them like extraction does."""
    result = ChunkExtraction(chunk_id=chunk_id)
    for index, text in enumerate(responses):
        parsed = parse_extraction(text, chunk_id, file_path, name_max_length)
        result = parsed if index == 0 else merge_gleaning(result, parsed)
    return result
