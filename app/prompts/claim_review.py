"""The prompt of the optional LLM check of claims: statements of an answer, each with the source passages it
was matched to; the model says, per statement, whether those passages back it."""

from __future__ import annotations

import json
from collections.abc import Sequence

from app.domain.chat import Message

CLAIM_REVIEW_SYSTEM = """You check an answer against its sources. For each numbered statement you get the source \
passages it was matched to. Judge each statement by those passages only, not by what you know:
- "supported": the passages state everything the statement says;
- "partial": the passages state some of it, nothing contradicts it;
- "unsupported": the passages do not state it, or say something else.
Reply with JSON only: {"verdicts": [{"id": 1, "support": "supported"}, ...]}, one entry per statement."""


def claim_review_messages(items: Sequence[tuple[str, Sequence[str]]]) -> list[Message]:
    """Messages for (statement, its passages) pairs, numbered from 1."""
    lines = [
        json.dumps({"id": i, "statement": statement, "passages": list(passages)}, ensure_ascii=False)
        for i, (statement, passages) in enumerate(items, start=1)
    ]
    return [
        {"role": "system", "content": CLAIM_REVIEW_SYSTEM},
        {"role": "user", "content": "Statements:\n" + "\n".join(lines)},
    ]
