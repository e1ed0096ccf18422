"""Keyword extraction for kg queries: one cached LLM call, parsed robustly.

Cache key = hash of (query, recent history, language) per project — not the mode, since the keywords do
not depend on it. Unlike the official implementation, recent history is part of the prompt and the key, so a
follow-up question ("and his wife?") retrieves what it refers to.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field

import json_repair

from app.db.engine import Database
from app.domain.chat import Message
from app.prompts.keywords import keyword_messages
from app.providers.llm import PRIORITY_QUERY, LLMClient
from app.repositories import llm_cache as llm_cache_repo
from app.services.cached_llm import cached_chat

log = logging.getLogger(__name__)

KEYWORD_HISTORY_MESSAGES = 4  # the last messages of the conversation given to keyword extraction
MAX_KEYWORDS_PER_LIST = 64

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_SPLIT = re.compile(r"[\n,;]+")


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
                parsed = json.loads(candidate[start:end + 1])
                if isinstance(parsed, dict):
                    return parsed
            except ValueError:
                pass
    for candidate in candidates:
        repaired = json_repair.loads(candidate)
        if isinstance(repaired, dict) and repaired:
            return repaired
    return None


def parse_keywords(text: str) -> ExtractedKeywords:
    """High/low keywords from a model answer: fenced or bare JSON, trailing prose, broken JSON (repaired).
    Anything unusable yields empty lists; the caller's empty-keyword policy takes over."""
    data = _json_object(text or "")
    if data is None:
        log.warning("keyword extraction answer was not JSON; using empty keywords")
        return ExtractedKeywords()
    return ExtractedKeywords(_as_list(data.get("high_level_keywords")), _as_list(data.get("low_level_keywords")))


class KeywordExtractor:
    def __init__(self, db: Database, llm: LLMClient, *, cache_enabled: bool) -> None:
        self.db = db
        self.llm = llm
        self.cache_enabled = cache_enabled

    async def extract(self, project_id: str, query: str, history: list[Message], language: str) -> ExtractedKeywords:
        recent = [m for m in history if m["role"] in ("user", "assistant")][-KEYWORD_HISTORY_MESSAGES:]
        messages = keyword_messages(query, recent, language)
        result = await cached_chat(
            self.db, self.llm, project_id, "keywords", messages,
            operation="keywords", priority=PRIORITY_QUERY, json_mode=True, enabled=self.cache_enabled,
        )
        keywords = parse_keywords(result.text)
        keywords.cached = result.hit
        if keywords.empty and self.cache_enabled and not result.hit:
            # Like the official cache, keep only useful answers: an empty one may be a transient model failure.
            async with self.db.transaction() as conn:
                await llm_cache_repo.delete_unreferenced(conn, project_id, [result.key])
        return keywords
