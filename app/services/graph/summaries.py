"""Description summarisation with map-reduce, without ever dropping a fragment.

Below the thresholds (fewer than FORCE_LLM_SUMMARY_ON_MERGE fragments and under SUMMARY_MAX_TOKENS)
the fragments are joined with SEP and no LLM is called. Otherwise one LLM call summarises them, or,
when they exceed SUMMARY_CONTEXT_SIZE, they are packed into groups that fit, each group summarised,
and the results reduced again. Oversize fragments (official LightRAG truncates them) are split into
pieces instead of being cut off, so every group fits the context and nothing is lost.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Literal

from app.core.config import Settings
from app.domain.chat import strip_think
from app.domain.texts import SEP, join_fragments
from app.prompts.summary import summary_messages
from app.providers.llm import PRIORITY_SUMMARY
from app.providers.tokenizer import Tokenizer
from app.services.cached_llm import CacheBatch, CachedLLM, ChatRequest, llm_identity, messages_key

log = logging.getLogger(__name__)

Kind = Literal["entity", "relation"]


_FENCE = re.compile(r"^\s*(`{3,}|~{3,})[\w-]*\s*$", re.MULTILINE)
_UNCLOSED_THINK = re.compile(r"<think(?:ing)?>", re.IGNORECASE)
_HEADING = re.compile(r"^\s*#{1,6}\s.*$")
_LABEL = re.compile(
    r"^\s*\**\s*(?:(?:(?:consolidated|merged|combined|final|updated|new)\s+)?(?:entity\s+|relation\s+)?"
    r"description|(?:consolidated|merged|combined|final|updated)\s+summary)\s*\**\s*:\s*\**\s*",
    re.IGNORECASE,
)
_PREAMBLE = re.compile(
    r"^\s*(?:sure|certainly|of course|okay|ok|here|below|this is|the following)\b.*:\s*$", re.IGNORECASE | re.DOTALL
)
_NOTE = re.compile(r"^\s*\(?\s*\**\s*note\s*\**\s*:", re.IGNORECASE)


def clean_summary(text: str) -> str:
    """The description in a summary answer, without reasoning, a preamble restating the task, a heading or
    label, code fences or a closing note. "" when nothing is left (the caller keeps the fragments)."""
    text = strip_think(text or "")
    unclosed = _UNCLOSED_THINK.search(text)
    if unclosed:  # reasoning cut off before the answer: nothing after the tag is the description
        text = text[: unclosed.start()]
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", _FENCE.sub("", text)) if p.strip()]
    while paragraphs and (
        _PREAMBLE.match(paragraphs[0])
        or _HEADING.match(paragraphs[0])
        or _LABEL.sub("", paragraphs[0]).strip(" *") == ""
    ):
        paragraphs.pop(0)
    while len(paragraphs) > 1 and _NOTE.match(paragraphs[-1]):
        paragraphs.pop()
    if paragraphs:
        paragraphs[0] = _LABEL.sub("", paragraphs[0])
    text = "\n\n".join(paragraphs).strip()
    if len(text) > 4 and text.startswith("**") and text.endswith("**") and "**" not in text[2:-2]:
        text = text[2:-2].strip()
    return text


def _cleaned(fragments: list[str]) -> list[str]:
    return [f.strip() for f in fragments if f and f.strip()]


# Fragments whose token counts are remembered: a caller checks needs_llm, first_call_key and then
# summarize on the same fragments, and a hub entity has hundreds of them.
_COUNTS_KEPT = 20_000


class Summarizer:
    def __init__(self, cache: CachedLLM, tokenizer: Tokenizer, settings: Settings) -> None:
        self.cache = cache
        self.llm = cache.llm
        self.tokenizer = tokenizer
        self.settings = settings
        self._counts: dict[str, int] = {}

    def _count(self, text: str) -> int:
        count = self._counts.get(text)
        if count is None:
            if len(self._counts) >= _COUNTS_KEPT:
                self._counts.clear()
            count = self._counts[text] = self.tokenizer.count(text)
        return count

    def needs_llm(self, fragments: list[str]) -> bool:
        """Whether `summarize` would call the LLM for these fragments (cheap pre-check for callers)."""
        items = _cleaned(fragments)
        if len(items) <= 1:
            return False
        if len(items) >= self.settings.force_llm_summary_on_merge:  # no need to count tokens
            return True
        return self._over_threshold(len(items), sum(map(self._count, items)))

    def _over_threshold(self, count: int, tokens: int) -> bool:
        """The official trigger: FORCE_LLM_SUMMARY_ON_MERGE fragments or SUMMARY_MAX_TOKENS tokens."""
        s = self.settings
        return count >= s.force_llm_summary_on_merge or tokens >= s.summary_max_tokens

    def first_call_key(self, kind: Kind, name: str, fragments: list[str], language: str) -> str | None:
        """The cache key of the one LLM call `summarize` makes when the fragments fit one context
        (None otherwise), so a caller can prefetch the cached summaries of many items at once."""
        items = _cleaned(fragments)
        if len(items) <= 1:
            return None
        total = sum(map(self._count, items))
        if not self._over_threshold(len(items), total) or total > self.settings.summary_context_size:
            return None
        messages = summary_messages(kind, name, items, language, self.settings.summary_length_recommended)
        return messages_key("summary", llm_identity(self.llm), messages)

    async def summarize(
        self,
        kind: Kind,
        name: str,
        fragments: list[str],
        language: str,
        *,
        project_id: str = "default",
        batch: CacheBatch | None = None,
    ) -> str:
        """The description to store: SEP-joined fragments below the thresholds, else an LLM summary."""
        items = _cleaned(fragments)
        if len(items) <= 1:
            return items[0] if items else ""
        s = self.settings
        counts = [self._count(f) for f in items]
        for round_ in range(s.summary_max_iterations):
            total = sum(counts)
            if total <= s.summary_context_size:
                # after a reduce round the partial summaries are always folded into one (the official code
                # may stop with several partial summaries joined by SEP)
                if round_ == 0 and not self._over_threshold(len(items), total):
                    return join_fragments(items)
                return await self._summarize_once(kind, name, items, language, project_id, batch)
            items, counts = self._split_oversize(items, counts)
            groups = self._pack(items, counts)
            items = list(
                await asyncio.gather(
                    *(
                        self._summarize_once(kind, name, group, language, project_id, batch)
                        if len(group) > 1
                        else asyncio.sleep(0, group[0])
                        for group in groups
                    )
                )
            )
            if len(items) == 1:
                return items[0]
            counts = [self._count(f) for f in items]
        log.warning(
            "summary of %s %r still has %d parts after %d rounds; keeping them joined",
            kind,
            name,
            len(items),
            s.summary_max_iterations,
        )
        return join_fragments(items)

    def _split_oversize(self, items: list[str], counts: list[int]) -> tuple[list[str], list[int]]:
        """Cut fragments above half the context into pieces, so any two of them fit one call."""
        limit = max(1, self.settings.summary_context_size // 2)
        out_items: list[str] = []
        out_counts: list[int] = []
        for item, count in zip(items, counts, strict=True):
            if count <= limit:
                out_items.append(item)
                out_counts.append(count)
                continue
            tokens = self.tokenizer.encode(item)
            for start in range(0, len(tokens), limit):
                piece = self.tokenizer.decode(tokens[start : start + limit]).strip()
                if piece:
                    out_items.append(piece)
                    out_counts.append(self.tokenizer.count(piece))
        return out_items, out_counts

    def _pack(self, items: list[str], counts: list[int]) -> list[list[str]]:
        """Greedy, in order: close a group when the next fragment would not fit (at least two per group)."""
        budget = self.settings.summary_context_size
        groups: list[list[str]] = []
        current: list[str] = []
        used = 0
        for item, count in zip(items, counts, strict=True):
            if current and used + count > budget:
                if len(current) == 1:
                    groups.append([*current, item])
                    current, used = [], 0
                    continue
                groups.append(current)
                current, used = [], 0
            current.append(item)
            used += count
        if current:
            groups.append(current)
        return groups

    async def _summarize_once(
        self, kind: Kind, name: str, items: list[str], language: str, project_id: str, batch: CacheBatch | None
    ) -> str:
        messages = summary_messages(kind, name, items, language, self.settings.summary_length_recommended)
        request = ChatRequest(
            "summary",
            messages,
            "summary",
            priority=PRIORITY_SUMMARY,
            use_cache=self.settings.enable_llm_cache_for_extract,
        )
        result = await self.cache.chat(project_id, request, batch)
        text = clean_summary(result.text).replace(SEP, " ").strip()
        if not text:
            log.warning("empty summary for %s %r; keeping the fragments", kind, name)
            return " ".join(items)
        return text
