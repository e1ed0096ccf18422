"""The optional LLM check of claims (CITATION_LLM_CHECK): one cached call per answer, for the claims the lexical
and embedding check left `partial`. The model may confirm such a claim or downgrade it to `unsupported`, never
raise one: a claim whose number or name is in no cited passage stays `unsupported` whatever a model says, and
`partial` is the most a model's word makes of wording the passages do not hold. A reply that cannot be read
leaves every claim as it was."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import replace

import json_repair

from app.domain.chat import strip_think
from app.domain.hits import ChunkHit
from app.prompts.claim_review import claim_review_messages
from app.providers.llm import PRIORITY_QUERY
from app.services.cached_llm import CachedLLM, ChatRequest
from app.services.citations.checker import CheckedAnswer, CheckedClaim

log = logging.getLogger(__name__)

OPERATION = "citation_check"
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_LINE = re.compile(r"(?:statement\s*)?#?(\d{1,4})\s*[:.)=-]+\s*\**\s*(\w[\w -]*)", re.IGNORECASE)
_ID = re.compile(r"\d{1,4}")


def _support(value: object) -> str | None:
    word = str(value).strip().lower().replace("_", " ")
    if word.startswith(("unsupported", "not ")) or word in ("no", "false", "contradicted"):
        return "unsupported"
    if word.startswith("partial"):
        return "partial"
    if word.startswith(("supported", "yes")) or word == "true":
        return "supported"
    return None


def _entries(parsed: object) -> list[tuple[object, object]]:
    if isinstance(parsed, dict):
        inner = parsed.get("verdicts", parsed.get("results", parsed.get("claims")))
        if isinstance(inner, list | dict):
            return _entries(inner)
        return list(parsed.items())  # {"1": "unsupported", ...}
    if isinstance(parsed, list):
        return [
            (e.get("id", e.get("statement", i)), e.get("support", e.get("verdict"))) if isinstance(e, dict) else (i, e)
            for i, e in enumerate(parsed, start=1)
        ]
    return []


def read_verdicts(reply: str, count: int) -> dict[int, str]:
    """Statement number (from 1) → its verdict, from a reply as models write them: JSON (fenced, with prose
    around it, broken), a bare list, or "1: unsupported" lines. Numbers outside 1..count are ignored."""
    text = strip_think(reply)
    parsed: object = None
    for candidate in [m.group(1) for m in _FENCE.finditer(text)] + [text]:
        start = min((i for i in (candidate.find("{"), candidate.find("[")) if i >= 0), default=-1)
        if start < 0:
            continue
        try:
            parsed = json.loads(candidate[start:])
        except ValueError:
            parsed = json_repair.loads(candidate[start:])
        if _entries(parsed):
            break
    entries = _entries(parsed) or [(m.group(1), m.group(2)) for m in _LINE.finditer(text)]
    verdicts: dict[int, str] = {}
    for key, value in entries:
        number = _ID.search(str(key))
        support = _support(value)
        if number and support and 1 <= int(number.group(0)) <= count:
            verdicts.setdefault(int(number.group(0)), support)
    return verdicts


def _passages(claim: CheckedClaim, content: dict[str, str]) -> list[str]:
    return [content.get(c.chunk_id, "")[c.start : c.end] for c in claim.citations]


async def review_partial_claims(
    llm: CachedLLM, project_id: str, checked: CheckedAnswer, chunks: Sequence[ChunkHit], *, use_cache: bool
) -> CheckedAnswer:
    """`checked` with its `partial` claims the model finds unsupported marked so (their first citation kept, so
    a reader sees what the source says instead)."""
    partial = [i for i, claim in enumerate(checked.claims) if claim.support == "partial"]
    if not partial:
        return checked
    content = {c.id: c.content for c in chunks}
    messages = claim_review_messages([(checked.claims[i].text, _passages(checked.claims[i], content)) for i in partial])
    request = ChatRequest(OPERATION, messages, OPERATION, priority=PRIORITY_QUERY, use_cache=use_cache)
    try:
        reply = (await llm.chat(project_id, request)).text
    except Exception as exc:  # noqa: BLE001 - the lexical verdicts stand when the model cannot be asked
        log.warning("LLM check of claims skipped: %s", exc)
        return checked
    verdicts = read_verdicts(reply, len(partial))
    claims = list(checked.claims)
    for number, index in enumerate(partial, start=1):
        if verdicts.get(number) == "unsupported":
            claims[index] = replace(claims[index], support="unsupported", citations=claims[index].citations[:1])
    return replace(checked, claims=tuple(claims))
