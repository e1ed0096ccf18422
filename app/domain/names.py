"""Normalisation of entity names and types, shared by extraction, curation and query.

Display names follow the official rules (quotes, HTML, full-width forms, CJK spacing). Identity goes
further than the official implementation: `entity_key` folds case and whitespace, so "Apple",
"APPLE" and " apple " are one entity while the first-seen display name is kept.
"""

from __future__ import annotations

import html
import re
import unicodedata

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")
# Bidirectional embeddings, overrides and isolates: they make a name or path read differently than it is.
BIDI_RANGE = r"\u202a-\u202e\u2066-\u2069"  # a character-class range, also for patterns in API schemas
BIDI_CONTROLS = re.compile(f"[{BIDI_RANGE}]")
_TAGS = re.compile(r"</?p\s*>|<br\s*/?>", re.IGNORECASE)
_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_SPACE_BETWEEN_CJK = re.compile(rf"(?<=[{_CJK}])\s+(?=[{_CJK}])")
_SPACE_CJK_ASCII = re.compile(rf"(?<=[{_CJK}])\s+(?=[A-Za-z0-9(\[])|(?<=[A-Za-z0-9)\]])\s+(?=[{_CJK}])")
_ASCII_QUOTE_TOUCHING_CJK = re.compile(rf"(?<=[{_CJK}])[\"']|[\"'](?=[{_CJK}])")
_OUTER_QUOTES = [('"', '"'), ("'", "'"), ("\u201c", "\u201d"), ("\u2018", "\u2019"), ("\u300a", "\u300b"), ("`", "`")]
_CURLY = re.compile("[\u201c\u201d\u2018\u2019]")
# A curly apostrophe inside a word is an apostrophe, not a quote: "Okafor\u2019s" keeps it as "Okafor's" (so the
# match key drops the possessive as it does for the straight one) and "O\u2019Brien" reads "O'Brien".
_WORD_APOSTROPHE = re.compile(r"(?<=\w)\u2019(?=\w)")
_FULLWIDTH_PUNCT = str.maketrans(
    {
        "\uff0d": "-",
        "\uff0b": "+",
        "\uff0f": "/",
        "\uff0a": "*",
        "\uff08": "(",
        "\uff09": ")",
        "\u2014": "-",
        "\u3000": " ",
        "\u00a0": " ",
    }
)
_TYPE_FORBIDDEN = set("'()<>|/\\")
_RESERVED_TYPES = {"__proto__", "constructor", "prototype"}
_DIGITS = re.compile(r"^\d+$")
# The most UTF-8 bytes of an entity key. Keys are indexed in pairs (relations, their provenance, duplicate
# rejections) and a btree index row holds at most 2,704 bytes: two keys of this size, a qualified type suffix
# each, the project id and a chunk id still fit. 1,024 bytes are ~340 Chinese characters or 1,024 ASCII ones.
NAME_MAX_BYTES = 1024
_DIGITS_DOTS = re.compile(r"^[\d.]+$")


def strip_control(text: str) -> str:
    """Drop control characters (tab, newline and carriage return stay), lone surrogates and non-characters:
    what PostgreSQL cannot store or a reader cannot see."""
    return _CONTROL.sub("", text)


def sanitize(text: str) -> str:
    """Trim, unescape HTML, drop control characters, bidirectional controls and surrogates."""
    return BIDI_CONTROLS.sub("", strip_control(html.unescape(text or "").strip())).strip()


def _fullwidth_to_ascii(text: str) -> str:
    out = []
    for ch in text:
        code = ord(ch)
        if 0xFF10 <= code <= 0xFF19 or 0xFF21 <= code <= 0xFF3A or 0xFF41 <= code <= 0xFF5A:
            out.append(chr(code - 0xFEE0))
        else:
            out.append(ch)
    return "".join(out).translate(_FULLWIDTH_PUNCT)


def _strip_outer_quotes(text: str) -> str:
    for left, right in _OUTER_QUOTES:
        if len(text) >= 2 and text.startswith(left) and text.endswith(right):
            inner = text[len(left) : -len(right)]
            if left not in inner and right not in inner:
                return inner.strip()
    return text


def _narrow_nbsp(text: str) -> str:
    return re.sub(r"(?<=\D)\u202f", " ", text)


def normalize_name(raw: str, max_length: int = 500) -> str:
    """A display name, or "" when the raw value is not a usable name."""
    return normalize_name_checked(raw, max_length)[0]


def normalize_name_checked(raw: str, max_length: int = 500) -> tuple[str, bool]:
    """(display name or "", whether it was cut to `max_length` characters or NAME_MAX_BYTES bytes of key)."""
    text = _TAGS.sub("", sanitize(raw))
    text = _narrow_nbsp(_fullwidth_to_ascii(text))
    text = _SPACE_BETWEEN_CJK.sub("", text)
    text = _SPACE_CJK_ASCII.sub("", text)
    text = _strip_outer_quotes(text.strip())
    text = _CURLY.sub("", _WORD_APOSTROPHE.sub("'", text))
    text = _ASCII_QUOTE_TOUCHING_CJK.sub("", text)
    text = " ".join(text.split())
    if not text:
        return "", False
    if _DIGITS.match(text) and len(text) < 3:
        return "", False
    if "." in text and _DIGITS_DOTS.match(text) and len(text) < 6:
        return "", False
    cut = len(text) > max_length
    if cut:
        text = text[:max_length].rstrip()
    if len(entity_key(text).encode("utf-8")) > NAME_MAX_BYTES:
        cut = True
        text = _within_key_bytes(text)
    return text, cut


def _within_key_bytes(text: str) -> str:
    """The longest prefix of `text` whose key fits NAME_MAX_BYTES (case folding may lengthen a key)."""
    text = text.encode("utf-8")[:NAME_MAX_BYTES].decode("utf-8", errors="ignore").rstrip()
    while len(entity_key(text).encode("utf-8")) > NAME_MAX_BYTES:
        text = text[: -max(1, len(text) // 64)].rstrip()
    return text


def entity_key(name: str) -> str:
    """Identity of an entity inside a project: whitespace-collapsed, Unicode case-folded, NFKC."""
    return unicodedata.normalize("NFKC", " ".join(name.split())).casefold()


def lookup_key(raw: str, max_length: int = 500) -> str:
    """The key a user-supplied name refers to (API paths and bodies use the extraction rules too)."""
    normalized = normalize_name(raw, max_length)
    return entity_key(normalized or raw.strip())


def normalize_type(raw: str) -> str:
    """Lower-case type without spaces; unusable values become "unknown" rather than dropping the entity."""
    text = sanitize(raw).replace('"', "").replace("'", "")
    if "," in text:
        text = next((part for part in text.split(",") if part.strip()), "")
    text = "".join(text.split()).lower()
    if not text or any(ch in _TYPE_FORBIDDEN for ch in text) or text in _RESERVED_TYPES or len(text) > 64:
        return "unknown"
    return text


def normalize_description(raw: str) -> str:
    return sanitize(raw)


def sorted_pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)
