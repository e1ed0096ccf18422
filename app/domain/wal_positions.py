"""PostgreSQL WAL positions as written in `X-Read-After-LSN` ('16/B374D848'), read by the service's replica
routing and sent back by its clients (the CLI); pure, so a client needs nothing of the database layer."""

from __future__ import annotations

import re

_LSN = re.compile(r"([0-9A-Fa-f]{1,8})/([0-9A-Fa-f]{1,8})")


def parse_lsn(value: str) -> int:
    """'16/B374D848' → an integer that orders like the positions; ValueError for anything else."""
    match = _LSN.fullmatch(value.strip())
    if match is None:
        raise ValueError(f"not a WAL position (expected e.g. 0/16B3748): {value[:40]!r}")
    return (int(match[1], 16) << 32) | int(match[2], 16)


def format_lsn(value: int) -> str:
    return f"{value >> 32:X}/{value & 0xFFFFFFFF:X}"
