"""Request-scoped token accounting.

Each HTTP request (and each pipeline document) gets its own `Usage` in a context variable; every
LLM and embedding call adds to whichever `Usage` is current, so concurrent work never mixes counts.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_calls: int = 0
    embedding_tokens: int = 0
    embedding_calls: int = 0
    calls_by_operation: dict[str, int] = field(default_factory=dict)

    def add_llm(self, operation: str, prompt_tokens: int, completion_tokens: int) -> None:
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.llm_calls += 1
        self.calls_by_operation[operation] = self.calls_by_operation.get(operation, 0) + 1

    def add_embedding(self, tokens: int) -> None:
        self.embedding_tokens += tokens
        self.embedding_calls += 1


_current: contextvars.ContextVar[Usage | None] = contextvars.ContextVar("usage", default=None)


def current_usage() -> Usage | None:
    return _current.get()


@contextmanager
def track_usage(usage: Usage | None = None) -> Iterator[Usage]:
    """Make `usage` (or a fresh one) the current accumulator for the enclosed block."""
    usage = usage if usage is not None else Usage()
    token = _current.set(usage)
    try:
        yield usage
    finally:
        _current.reset(token)
