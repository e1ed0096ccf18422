"""Answers the way a citing model writes them, for the fake LLM's "query" handler: read the context chunks
(id, reference_id, content) out of the answer prompt and write sentences with markers."""

from __future__ import annotations

import json
from collections.abc import Callable


def context_chunks(messages: list[dict]) -> list[dict]:
    """The chunk lines of the system prompt, in context order."""
    found = []
    for line in messages[0]["content"].splitlines():
        if line.startswith('{"id": "c'):
            found.append(json.loads(line))
    return found


def citing(write: Callable[[list[dict]], str]) -> Callable[[list[dict]], str]:
    """A "query" handler answering `write(chunks)`."""
    return lambda messages: write(context_chunks(messages))


def chunk_with(chunks: list[dict], words: str) -> dict:
    return next(c for c in chunks if words in c["content"])
