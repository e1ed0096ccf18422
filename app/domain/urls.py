"""URLs safe to show: a provider URL may carry credentials (https://user:key@host/…, ?api_key=…)."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

_SECRET_PARAMETER = re.compile(r"key|token|secret|password|passwd|pwd|sig|auth|credential", re.IGNORECASE)
REDACTED = "REDACTED"


def without_credentials(url: str | None) -> str | None:
    """The URL without its user info, and with the values of secret-looking query parameters redacted."""
    if not url:
        return url
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:  # not a URL we can take apart: show nothing of it rather than a secret
        return REDACTED
    netloc = (f"[{host}]" if ":" in host else host) + (f":{port}" if port else "")
    query = urlencode(
        [
            (name, REDACTED if _SECRET_PARAMETER.search(name) else value)
            for name, value in parse_qsl(parts.query, keep_blank_values=True)
        ],
        safe="/:",
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
