"""Counting the values of a JSON body while it streams in, without parsing it.

Parsing a body of a million tiny list items takes the event loop for seconds and the process for a
gigabyte before any schema can refuse it; counting its commas, brackets and braces outside strings is cheap
and stops at the limit. The count is an estimate of the values in the body (each array item or object member
after the first adds a comma, each array or object a bracket or brace), exact enough for a limit.

Every step is a bytes method (C speed): escaped backslashes and quotes are blanked out, then splitting at the
remaining quotes alternates between text outside strings and inside them.
"""

from __future__ import annotations


class JsonValueCounter:
    """Fed the body in pieces; `feed` answers False once the body holds more than `limit` values."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.count = 0
        self._in_string = False
        self._escape_pending = False  # the previous piece ended on the backslash of an escape

    def feed(self, piece: bytes) -> bool:
        if not piece:
            return self.count <= self.limit
        if self._escape_pending:
            piece, self._escape_pending = b"_" + piece[1:], False
        if b"\\" in piece:
            piece = piece.replace(b"\\\\", b"__").replace(b'\\"', b"__")
            self._escape_pending = piece.endswith(b"\\")
        parts = piece.split(b'"')
        outside = b"".join(parts[1::2] if self._in_string else parts[0::2])
        if len(parts) % 2 == 0:  # an odd number of quotes: the piece ends on the other side
            self._in_string = not self._in_string
        self.count += outside.count(b",") + outside.count(b"[") + outside.count(b"{")
        return self.count <= self.limit
