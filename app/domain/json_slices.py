"""Compact JSON for large answers, encoded a slice of each list at a time.

Meant for a worker thread: the encoder is native code that holds the GIL for the whole of one call, so a
10 MB list encoded in one call would stop the event loop's thread for as long; slices of a few hundred items
give it a turn every few milliseconds. The output is what a JSON response of the same values would be
(non-ASCII kept as UTF-8, no spaces)."""

from __future__ import annotations

from typing import Any

from pydantic_core import to_json

SLICE = 256


def json_object(fields: dict[str, Any]) -> bytes:
    parts = [b"{"]
    for index, (name, value) in enumerate(fields.items()):
        parts.append(b"," if index else b"")
        parts.append(to_json(name) + b":")
        if isinstance(value, list):
            slices = [to_json(value[start : start + SLICE])[1:-1] for start in range(0, len(value), SLICE)]
            parts.append(b"[" + b",".join(slices) + b"]")
        else:
            parts.append(to_json(value))
    parts.append(b"}")
    return b"".join(parts)
