"""Keyword extraction for kg queries: one cached LLM call, parsed robustly.

Cache key = hash of (query, recent history, language) per project — not the mode, since the keywords do
not depend on it. Unlike the official implementation, recent history is part of the prompt and the key, so a
follow-up question ("and his wife?") retrieves what it refers to.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field, replace

import json_repair

from app.domain.chat import Message, strip_think
from app.prompts.keywords import keyword_messages
from app.prompts.structured import KEYWORDS_SCHEMA, KEYWORDS_SCHEMA_NAME
from app.providers.llm import PRIORITY_QUERY, StructuredOutputRejected, json_schema_format
from app.repositories import llm_cache as llm_cache_repo
from app.services.cached_llm import CachedLLM, ChatRequest

log = logging.getLogger(__name__)

KEYWORD_HISTORY_MESSAGES = 4  # the last messages of the conversation given to keyword extraction
MAX_KEYWORDS_PER_LIST = 64

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_SPLIT = re.compile(r"[\n,;]+")
_KEY_FORM = re.compile(r"[\s_\-]")
_UNCLOSED_THINK = re.compile(r"<think(?:ing)?>", re.IGNORECASE)
_JSON_FORMAT = json_schema_format(KEYWORDS_SCHEMA_NAME, KEYWORDS_SCHEMA)


@dataclass
class ExtractedKeywords:
    high_level: list[str] = field(default_factory=list)
    low_level: list[str] = field(default_factory=list)
    cached: bool = False

    @property
    def empty(self) -> bool:
        return not self.high_level and not self.low_level


def _as_list(value: object) -> list[str]:
    if isinstance(value, str):
        items: list[object] = list(_SPLIT.split(value))
    elif isinstance(value, list):
        items = value
    else:
        return []
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            continue  # non-strings are dropped, as official LightRAG does
        item = item.strip()
        if item and item not in out:
            out.append(item)
    return out[:MAX_KEYWORDS_PER_LIST]


def _json_object(text: str) -> dict | None:
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for candidate in candidates:
        start, end = candidate.find("{"), candidate.rfind("}")
        if start != -1 and end > start:
            try:
                parsed = json.loads(candidate[start : end + 1])
                if isinstance(parsed, dict):
                    return parsed
            except ValueError:
                pass
    for candidate in candidates:
        repaired = json_repair.loads(candidate)
        if isinstance(repaired, dict) and repaired:
            return repaired
    return None


def _field(data: dict, level: str) -> object:
    """A keyword list under its name or a near miss ("high_level", "highLevelKeywords", "High-level keywords")."""
    for key, value in data.items():
        if _KEY_FORM.sub("", str(key).lower()) in (f"{level}levelkeywords", f"{level}level", f"{level}keywords"):
            return value
    return None


def parse_keywords(text: str) -> ExtractedKeywords:
    """High/low keywords from a model answer: fenced or bare JSON, prose or reasoning around it, broken JSON
    (repaired). Anything unusable yields empty lists; `with_fallbacks` then supplies keywords."""
    text = strip_think(text or "")
    if unclosed := _UNCLOSED_THINK.search(text):  # reasoning cut off before any answer: not the answer
        text = text[: unclosed.start()]
    data = _json_object(text)
    if data is None:
        log.warning("keyword extraction answer was not JSON; using empty keywords")
        return ExtractedKeywords()
    return ExtractedKeywords(_as_list(_field(data, "high")), _as_list(_field(data, "low")))


def with_fallbacks(keywords: ExtractedKeywords, query: str) -> ExtractedKeywords:
    """Keywords to search with: an empty low-level list falls back to the query text and the high-level
    keywords, so local and hybrid queries always have something to look entities up with."""
    if keywords.low_level:
        return keywords
    low: list[str] = []
    for item in [query.strip(), *keywords.high_level]:
        if item and item not in low:
            low.append(item)
    return ExtractedKeywords(list(keywords.high_level), low[:MAX_KEYWORDS_PER_LIST], keywords.cached)


class KeywordExtractor:
    def __init__(self, cache: CachedLLM, *, cache_enabled: bool) -> None:
        self.cache = cache
        self.db = cache.db
        self.cache_enabled = cache_enabled

    async def extract(self, project_id: str, query: str, history: list[Message], language: str) -> ExtractedKeywords:
        recent = [m for m in history if m["role"] in ("user", "assistant")][-KEYWORD_HISTORY_MESSAGES:]
        messages = keyword_messages(query, recent, language)
        llm = self.cache.llm
        structured = llm.settings.extraction_format == "json" and llm.structured_outputs is not False
        request = ChatRequest(
            "keywords",
            messages,
            "keywords",
            priority=PRIORITY_QUERY,
            json_mode=True,
            use_cache=self.cache_enabled,
            response_format=_JSON_FORMAT if structured else None,
        )
        try:
            result = await self.cache.chat(project_id, request)
        except StructuredOutputRejected:  # remembered by the client; plain JSON mode from now on
            result = await self.cache.chat(project_id, replace(request, response_format=None))
        keywords = parse_keywords(result.text)
        keywords.cached = result.hit
        if keywords.empty and self.cache_enabled and not result.hit:
            # Like the official cache, keep only useful answers: an empty one may be a transient model failure.
            async with self.db.transaction(seen_by_client=False) as conn:
                await llm_cache_repo.delete_unreferenced(conn, project_id, [result.key])
        if keywords.empty:
            log.warning("no keywords extracted for the query; searching with the query text")
        return with_fallbacks(keywords, query)
