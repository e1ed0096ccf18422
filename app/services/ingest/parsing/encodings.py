"""Bytes to text for text-like uploads: UTF-8, or UTF-16/32 announced by a byte-order mark. Nothing is guessed."""

from __future__ import annotations

import codecs

from app.core.errors import InvalidInput

_BOMS = [
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),  # before UTF-16: they share a prefix
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
]


def bom_encoding(data: bytes) -> str | None:
    return next((name for bom, name in _BOMS if data.startswith(bom)), None)


def decode_text(filename: str, data: bytes) -> str:
    """UTF-8 (with or without BOM) or UTF-16/32 with a BOM; anything else is refused, not guessed."""
    encoding = bom_encoding(data) or "utf-8"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{filename}: cannot decode the file as {encoding} text", code="cannot_decode") from exc
    if "\x00" in text:
        raise InvalidInput(f"{filename}: cannot decode the file: it looks binary", code="cannot_decode")
    return text
