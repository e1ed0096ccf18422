"""Mode prefixes in chat messages: "/local Who is Alice?" asks in local mode, "/context …" returns the
retrieved context instead of an answer. Without a prefix the mode is mix."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import get_args

from app.schemas.query import QueryMode

DEFAULT_MODE: QueryMode = "mix"
CONTEXT_PREFIX = "context"
PREFIXES: tuple[str, ...] = (*get_args(QueryMode), CONTEXT_PREFIX)

_PREFIX = re.compile(r"^\s*/(" + "|".join(PREFIXES) + r")(?=\s|$)\s*", re.IGNORECASE)


@dataclass(frozen=True)
class ModedText:
    text: str  # without the prefix
    mode: QueryMode
    context_only: bool = False
    prefixed: bool = False


def split_mode(text: str) -> ModedText:
    """The mode a message's leading prefix asks for, and the message without it."""
    match = _PREFIX.match(text)
    if match is None:
        return ModedText(text, DEFAULT_MODE)
    word = match.group(1).lower()
    rest = text[match.end() :]
    if word == CONTEXT_PREFIX:
        return ModedText(rest, DEFAULT_MODE, context_only=True, prefixed=True)
    return ModedText(rest, word, prefixed=True)  # type: ignore[arg-type]  # one of QueryMode by the pattern
