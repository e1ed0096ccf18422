"""What pure code needs of a tokenizer; `app.providers.tokenizer.Tokenizer` (tiktoken) is the implementation."""

from __future__ import annotations

from typing import Protocol


class Tokenizer(Protocol):
    name: str

    def encode(self, text: str) -> list[int]: ...

    def decode(self, tokens: list[int]) -> str: ...

    def token_bytes(self, tokens: list[int]) -> list[bytes]: ...

    def __hash__(self) -> int: ...  # per-tokenizer results are cached

    def count(self, text: str) -> int: ...

    def truncate(self, text: str, max_tokens: int) -> str: ...
