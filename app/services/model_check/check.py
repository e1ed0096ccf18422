"""The model check: is the configured model good enough to build a knowledge graph with?

One extraction, one gleaning turn, one keyword extraction, one summary and one embedding on a small built-in
text whose facts are known, through the same prompts, caps and parsers as ingestion (no cache). The report
gives latency and tokens per call, records parsed and unparseable, known facts found, keyword JSON validity,
the embedding dimension against EMBEDDING_DIM, and a verdict (good / usable / not recommended) with reasons.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from app.core.config import Settings
from app.core.errors import AppError
from app.domain.chat import Message, strip_think
from app.domain.extraction_parser import merge_gleaning
from app.domain.names import entity_key
from app.domain.records import ChunkExtraction
from app.domain.runaway import loop_start
from app.domain.urls import without_credentials
from app.prompts import structured
from app.prompts.extraction import extraction_messages, gleaning_messages
from app.prompts.keywords import keyword_messages
from app.prompts.summary import summary_messages
from app.providers.embeddings import EmbeddingClient
from app.providers.llm import LLMClient, LLMResult, StructuredOutputRejected, json_schema_format
from app.services.ingest.extraction import read_answer
from app.services.query.keywords import parse_keywords

SAMPLE_TEXT = (
    "Ada Lindqvist is a marine biologist at the Norrsund Institute in Bergen. In 2019 she led the Coral Atlas "
    "project, which the Halvorsen Foundation funded. Her colleague Tomas Berg built Skarv, the underwater "
    "drone that photographed the reefs for the Coral Atlas."
)
KNOWN_ENTITIES = [
    "Ada Lindqvist",
    "Norrsund Institute",
    "Bergen",
    "Coral Atlas",
    "Halvorsen Foundation",
    "Tomas Berg",
    "Skarv",
]
KNOWN_RELATIONS = [
    ("Ada Lindqvist", "Norrsund Institute"),
    ("Ada Lindqvist", "Coral Atlas"),
    ("Halvorsen Foundation", "Coral Atlas"),
    ("Tomas Berg", "Skarv"),
]
SAMPLE_QUERY = "Who funded the Coral Atlas project led by Ada Lindqvist?"
SUMMARY_FRAGMENTS = [
    "Ada Lindqvist is a marine biologist at the Norrsund Institute.",
    "Ada Lindqvist led the Coral Atlas project in 2019.",
]
_WRONG_DIM = re.compile(r"returned (\d+)-d vectors")

GOOD, USABLE, NOT_RECOMMENDED = "good", "usable", "not recommended"


@dataclass
class CallReport:
    call: str
    ok: bool = False
    latency_ms: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    runaway: str | None = None  # "length" (cut by its cap) or "loop" (repeating itself)
    error: str | None = None


@dataclass
class ModelCheckReport:
    model: str
    embedding_model: str
    extraction_format: str
    calls: list[CallReport] = field(default_factory=list)
    records_parsed: int = 0
    records_unparseable: int = 0
    entities: list[str] = field(default_factory=list)
    facts_found: int = 0
    facts_total: int = len(KNOWN_ENTITIES) + len(KNOWN_RELATIONS)
    keywords_json: str = "invalid"  # valid | repaired (prose or broken JSON around it) | invalid
    summary_ok: bool = False
    embedding_dim: int | None = None
    embedding_dim_expected: int = 0
    verdict: str = NOT_RECOMMENDED
    reasons: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def llm_configuration(llm: LLMClient, embedder: EmbeddingClient, settings: Settings) -> dict[str, Any]:
    """What a check would use, without calling anything (the URL without credentials)."""
    return {
        "llm": {
            "configured": llm.configured,
            "model": settings.llm_model,
            "base_url": without_credentials(settings.llm_base_url),
            "context_window": llm.context_window,
            "extraction_format": settings.extraction_format,
            "structured_outputs": llm.structured_outputs,
            "max_tokens": {op: llm.completion_cap(op) for op in ("extract", "keywords", "summary", "query")},
        },
        "embedding": {
            "configured": embedder.configured,
            "model": settings.embedding_model,
            "dim": settings.embedding_dim,
        },
    }


class ModelCheck:
    def __init__(self, llm: LLMClient, embedder: EmbeddingClient, settings: Settings) -> None:
        self.llm, self.embedder, self.settings = llm, embedder, settings
        self.types, self.language = list(settings.entity_types), settings.summary_language

    async def run(self) -> ModelCheckReport:
        self.llm.require()
        report = ModelCheckReport(
            self.llm.model,
            self.embedder.model,
            self.settings.extraction_format,
            embedding_dim_expected=self.settings.embedding_dim,
        )
        extraction = await self._extraction(report)
        report.records_parsed, report.records_unparseable = extraction.recovered, extraction.malformed
        report.entities = sorted({e.name for e in extraction.entities})
        report.facts_found = _facts_found(extraction)
        keywords = await self._call(
            report, "keywords", keyword_messages(SAMPLE_QUERY, [], self.language), json_mode=True
        )
        if keywords is not None:
            report.keywords_json = _keyword_validity(keywords.text)
        summary = await self._call(
            report,
            "summary",
            summary_messages(
                "entity", "Ada Lindqvist", SUMMARY_FRAGMENTS, self.language, self.settings.summary_length_recommended
            ),
        )
        report.summary_ok = summary is not None and "lindqvist" in summary.text.lower()
        await self._embedding(report)
        report.verdict, report.reasons = verdict(report)
        return report

    async def _call(
        self,
        report: ModelCheckReport,
        operation: str,
        messages: list[Message],
        *,
        json_mode: bool = False,
        response_format: dict | None = None,
    ) -> LLMResult | None:
        entry = CallReport(operation)
        report.calls.append(entry)
        started = time.perf_counter()
        try:
            result = await self.llm.chat(
                messages, operation=operation, json_mode=json_mode, response_format=response_format
            )
        except StructuredOutputRejected:
            report.calls.pop()
            raise
        except AppError as exc:
            entry.error = exc.detail
            return None
        finally:
            entry.latency_ms = round((time.perf_counter() - started) * 1000)
        entry.ok, entry.prompt_tokens, entry.completion_tokens = True, result.prompt_tokens, result.completion_tokens
        entry.runaway = "length" if result.truncated else "loop" if loop_start(result.text) is not None else None
        return result

    async def _extraction(self, report: ModelCheckReport) -> ChunkExtraction:
        use_json = self.settings.extraction_format == "json" and self.llm.structured_outputs is not False
        schema = json_schema_format(structured.EXTRACTION_SCHEMA_NAME, structured.EXTRACTION_SCHEMA)
        messages = (structured.json_extraction_messages if use_json else extraction_messages)(
            SAMPLE_TEXT, self.types, self.language
        )
        try:
            first = await self._call(report, "extract", messages, response_format=schema if use_json else None)
        except StructuredOutputRejected:
            use_json, report.extraction_format = False, "records (the provider refused JSON-schema output)"
            messages = extraction_messages(SAMPLE_TEXT, self.types, self.language)
            first = await self._call(report, "extract", messages)
        if first is None:
            return ChunkExtraction(chunk_id="check")
        result, text, _ = read_answer(first.text, "check", None, self.settings.entity_name_max_length, self.types)
        glean_messages = (structured.json_gleaning_messages if use_json else gleaning_messages)(messages, text)
        glean = await self._call(report, "glean", glean_messages, response_format=schema if use_json else None)
        if glean is not None:
            more, _, _ = read_answer(glean.text, "check", None, self.settings.entity_name_max_length, self.types)
            result = merge_gleaning(result, more)
        return result

    async def _embedding(self, report: ModelCheckReport) -> None:
        entry = CallReport("embedding")
        report.calls.append(entry)
        started = time.perf_counter()
        try:
            report.embedding_dim = len(await self.embedder.embed_one(SAMPLE_TEXT))
            entry.ok = True
        except AppError as exc:
            entry.error = exc.detail
            wrong = _WRONG_DIM.search(exc.detail)
            report.embedding_dim = int(wrong.group(1)) if wrong else None
        entry.latency_ms = round((time.perf_counter() - started) * 1000)
        entry.prompt_tokens = self.embedder.tokenizer.count(SAMPLE_TEXT)


def _matches(found: str, known: str) -> bool:
    found, known = entity_key(found), entity_key(known)
    return found == known or (len(found) >= 4 and (known in found or found in known))


def _facts_found(extraction: ChunkExtraction) -> int:
    names = [e.name for e in extraction.entities]
    entities = sum(1 for known in KNOWN_ENTITIES if any(_matches(name, known) for name in names))
    pairs = [(r.src_name, r.tgt_name) for r in extraction.relations]
    relations = sum(
        1
        for a, b in KNOWN_RELATIONS
        if any((_matches(x, a) and _matches(y, b)) or (_matches(x, b) and _matches(y, a)) for x, y in pairs)
    )
    return entities + relations


def _keyword_validity(text: str) -> str:
    try:
        data = json.loads(strip_think(text))
    except ValueError:
        data = None
    if isinstance(data, dict) and all(
        isinstance(data.get(k), list) for k in ("high_level_keywords", "low_level_keywords")
    ):
        return "valid"
    return "invalid" if parse_keywords(text).empty else "repaired"


def verdict(report: ModelCheckReport) -> tuple[str, list[str]]:
    """good / usable / not recommended, and the findings that decided it."""
    blocking: list[str] = []
    weak: list[str] = []
    failed = {call.call for call in report.calls if call.error}  # a call that failed has no answer to judge
    for call in report.calls:
        if call.error:
            blocking.append(f"the {call.call} call failed: {call.error}")
        elif call.runaway:
            how = "cut by its max_tokens cap" if call.runaway == "length" else "repeating itself"
            weak.append(f"the {call.call} answer ran away ({how})")
    share = report.facts_found / report.facts_total
    facts = f"{report.facts_found} of {report.facts_total} known facts found"
    if "extract" not in failed:
        if report.records_parsed == 0:
            blocking.append("no extraction record could be parsed: the model does not follow the record format")
        elif share < 0.4:
            blocking.append(facts)
        elif share < 0.75:
            weak.append(facts)
        if report.records_unparseable > max(1, report.records_parsed // 5):
            weak.append(f"{report.records_unparseable} unparseable records for {report.records_parsed} parsed")
    if report.keywords_json != "valid" and "keywords" not in failed:
        weak.append(f"keyword answer {'needed repair' if report.keywords_json == 'repaired' else 'was not JSON'}")
    if not report.summary_ok and "summary" not in failed:
        weak.append("the summary does not describe its subject")
    if report.embedding_dim is not None and report.embedding_dim != report.embedding_dim_expected:
        blocking.append(
            f"embeddings have {report.embedding_dim} dimensions but EMBEDDING_DIM is {report.embedding_dim_expected}"
        )
    if blocking:
        return NOT_RECOMMENDED, blocking + weak
    if weak:
        return USABLE, weak
    return GOOD, [f"{facts}; records, keywords, summary and embeddings as expected"]
