"""Per-chunk extraction: first pass plus gleaning passes, every pass through the LLM cache.

The cache keys of all passes are returned in order so the pipeline can store them on the chunk;
`extraction_from_cached` rebuilds the same result from those cached answers without any LLM call.
"""

from __future__ import annotations

import logging
import time

from app.core import metrics
from app.core.config import Settings
from app.db.engine import Database
from app.domain.chat import Message
from app.domain.extraction_parser import merge_gleaning, parse_extraction
from app.domain.records import ChunkExtraction, ExtractionReport
from app.domain.runaway import trim_loop
from app.prompts import structured
from app.prompts.extraction import corrective_messages, extraction_messages, gleaning_messages
from app.providers.llm import (
    PRIORITY_EXTRACT,
    ContextLengthExceeded,
    StructuredOutputRejected,
    json_schema_format,
)
from app.repositories import documents as docs_repo
from app.services.cached_llm import CacheBatch, CachedLLM, ChatRequest, llm_identity, messages_key

log = logging.getLogger(__name__)

CACHE_TYPE = "extract"
_JSON_FORMAT = json_schema_format(structured.EXTRACTION_SCHEMA_NAME, structured.EXTRACTION_SCHEMA)


def read_answer(
    text: str, chunk_id: str, file_path: str | None, name_limit: int, entity_types: list[str] | None
) -> tuple[ChunkExtraction, str, bool]:
    """(records, the answer up to any loop, whether it looped) of one pass's answer. A well-formed JSON
    answer counts as finished, like the record format's completion marker, even with empty lists."""
    text, looped = trim_loop(text)
    started = time.perf_counter()
    try:
        result = parse_extraction(text, chunk_id, file_path, name_limit, entity_types)
    finally:
        metrics.PIPELINE_STAGE_SECONDS.labels("parse").inc(time.perf_counter() - started)
    if not result.completed and structured.is_json_extraction_answer(text):
        result.completed = True
        result.no_usable_records = result.recovered == 0 and result.malformed > 0
    return result, text, looped


class Extractor:
    def __init__(self, cache: CachedLLM, settings: Settings) -> None:
        self.cache = cache
        self.llm = cache.llm
        self.settings = settings

    def _input_tokens(self, messages: list[Message]) -> int:
        return sum(self.llm.tokenizer.count(m["content"]) for m in messages)

    async def _pass(
        self,
        project_id: str,
        messages: list[Message],
        operation: str,
        batch: CacheBatch | None,
        known_absent: bool = False,
        json_format: bool = False,
    ):
        request = ChatRequest(
            CACHE_TYPE,
            messages,
            operation,
            priority=PRIORITY_EXTRACT,
            use_cache=self.settings.enable_llm_cache_for_extract,
            known_absent=known_absent,
            response_format=_JSON_FORMAT if json_format else None,
        )
        return await self.cache.chat(project_id, request, batch)

    @property
    def json_format(self) -> bool:
        """EXTRACTION_FORMAT=json, unless this provider has refused JSON-schema output in this process."""
        return self.settings.extraction_format == "json" and self.llm.structured_outputs is not False

    def _first_messages(self, content: str, entity_types: list[str], language: str, json_format: bool) -> list[Message]:
        build = structured.json_extraction_messages if json_format else extraction_messages
        return build(content, entity_types, language)

    def first_pass_key(self, content: str, entity_types: list[str], language: str) -> str:
        """The cache key of a chunk's first extraction pass (to prefetch a document's answers at once)."""
        return messages_key(
            CACHE_TYPE, llm_identity(self.llm), self._first_messages(content, entity_types, language, self.json_format)
        )

    def gleaning_limit(self) -> int:
        """Largest gleaning conversation in tokens (0 = no limit): MAX_EXTRACT_INPUT_TOKENS, and within the
        model's context window (set or learned) with room left for the answer."""
        limit = self.settings.max_extract_input_tokens
        window = self.llm.context_window
        if window:
            room = window - (self.settings.llm_max_tokens_extract or window // 4)
            limit = min(limit, room) if limit else room
        return max(limit, 1) if window else limit

    def _read(
        self, answer, operation: str, chunk_id: str, file_path: str | None, entity_types: list[str]
    ) -> tuple[ChunkExtraction, str, bool]:
        """A pass's records, its answer up to any loop, and whether it ran away (cut by its cap or looping)."""
        result, text, looped = read_answer(
            answer.text, chunk_id, file_path, self.settings.entity_name_max_length, entity_types
        )
        if looped and not answer.truncated:
            metrics.LLM_RUNAWAY_ANSWERS.labels(operation, "loop").inc()
        if looped or answer.truncated:
            log.warning(
                "chunk %s: the %s answer ran away (%s); keeping the records before it",
                chunk_id,
                operation,
                "cut by its max_tokens cap" if answer.truncated else "repeating itself",
            )
        return result, text, looped or answer.truncated

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
        json_format = self.json_format
        messages = self._first_messages(content, entity_types, language, json_format)
        try:
            answer = await self._pass(project_id, messages, "extract", batch, json_format=json_format)
        except StructuredOutputRejected:  # remembered by the client: later chunks ask for records at once
            json_format = False
            messages = extraction_messages(content, entity_types, language)
            answer = await self._pass(project_id, messages, "extract", batch)
        keys = [answer.key]
        result, text, ran_away = self._read(answer, "extract", chunk_id, file_path, entity_types)
        runaway = int(ran_away)
        if result.no_usable_records:
            # prose, nothing, or only broken records: ask once more with a reminder of the format
            metrics.EXTRACTION_FORMAT_FAILURES.labels("retried").inc()
            log.warning("chunk %s: the extraction answer held no usable record; asking once more", chunk_id)
            messages = (structured.json_corrective_messages if json_format else corrective_messages)(messages, text)
            answer = await self._pass(
                project_id, messages, "extract_retry", batch, known_absent=not answer.hit, json_format=json_format
            )
            keys.append(answer.key)
            retry, text, ran_away = self._read(answer, "extract_retry", chunk_id, file_path, entity_types)
            runaway += ran_away
            result = merge_gleaning(result, retry)
            result.retried = True
            outcome = "failed" if result.no_usable_records else "recovered"
            metrics.EXTRACTION_FORMAT_FAILURES.labels(outcome).inc()
            if result.no_usable_records:
                log.warning("chunk %s: extraction failed, the model returned no usable records", chunk_id)
                max_gleaning = 0
        if runaway and max_gleaning:
            # a model that ran away once would mostly run away again, at the cost of another full answer
            metrics.GLEANING_SKIPPED.labels("runaway").inc()
            max_gleaning = 0
        limit = self.gleaning_limit()
        for _ in range(max_gleaning):
            messages = (structured.json_gleaning_messages if json_format else gleaning_messages)(messages, text)
            if limit and self._input_tokens(messages) > limit:
                metrics.GLEANING_SKIPPED.labels("size").inc()
                log.info("gleaning skipped for %s: conversation exceeds %d tokens", chunk_id, limit)
                break
            # a gleaning conversation quotes the previous answer: after a fresh answer it cannot be cached
            try:
                answer = await self._pass(
                    project_id, messages, "glean", batch, known_absent=not answer.hit, json_format=json_format
                )
            except (ContextLengthExceeded, StructuredOutputRejected) as exc:
                # the first pass stands: gleaning only adds to it
                metrics.GLEANING_SKIPPED.labels("rejected").inc()
                log.warning("chunk %s: gleaning skipped, the provider refused it (%s)", chunk_id, exc.code)
                break
            keys.append(answer.key)
            glean, text, ran_away = self._read(answer, "glean", chunk_id, file_path, entity_types)
            runaway += ran_away
            result = merge_gleaning(result, glean)
            if ran_away or (not glean.entities and not glean.relations and not glean.malformed):
                break  # the model found nothing more; further passes would only repeat that
        metrics.EXTRACTION_RECORDS.labels("recovered").inc(result.recovered)
        metrics.EXTRACTION_RECORDS.labels("unrecoverable").inc(result.malformed)
        if result.malformed:
            metrics.EXTRACTION_MALFORMED.inc(result.malformed)
            log.warning("chunk %s: %d unparseable extraction record(s) skipped", chunk_id, result.malformed)
        result.runaway_answers = runaway
        return result, keys


def extraction_from_cached(
    responses: list[str],
    chunk_id: str,
    file_path: str | None,
    name_max_length: int = 500,
    entity_types: list[str] | None = None,
) -> ChunkExtraction:
    """Re-parse a chunk's cached pass answers (first pass, a corrective retry if there was one, then gleanings)
    and merge them like extraction does. Pass the project's entity types to map types as extraction did."""
    result = ChunkExtraction(chunk_id=chunk_id)
    looped = 0
    for index, text in enumerate(responses):
        parsed, _, loop = read_answer(text, chunk_id, file_path, name_max_length, entity_types)
        looped += loop
        result = parsed if index == 0 else merge_gleaning(result, parsed)
    result.runaway_answers = looped  # answers cut by their cap were never cached
    return result


async def store_report(
    db: Database, project_id: str, document_id: str, worker_id: str, extractions: list[ChunkExtraction]
) -> ExtractionReport:
    """Store what extraction produced on the document (while the claim is ours); log its warning, if any.

    A document whose chunks yield no usable record stays `processed`: its chunks are stored and embedded
    and serve naive and mix queries, so the report's warning says what is missing instead of failing it."""
    report = ExtractionReport.of(extractions)
    if report.warning:
        log.warning(
            "document %s/%s: %s (%d chunks, %d failed, %d unparseable records)",
            project_id,
            document_id,
            report.warning,
            report.chunks,
            report.failed_chunks,
            report.unparseable_records,
        )
    async with db.transaction() as conn:
        if await docs_repo.lock_claim(conn, project_id, document_id, worker_id) is not None:
            await docs_repo.set_fields(conn, project_id, document_id, extraction_report=report.as_dict())
    return report
