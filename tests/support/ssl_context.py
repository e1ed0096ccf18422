"""Build the providers' default TLS context once per test process instead of once per client.

Every LLM and embedding client builds an `ssl.SSLContext` from the system certificate bundle when it is
created (~120 ms of certificate parsing, two clients per app start), although the tests only speak plain
HTTP to loopback fakes. A context is safe to share between connections, so the default one is built once.
"""

from __future__ import annotations

import functools
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx2
import pytest


@contextmanager
def shared_default_ssl_context() -> Iterator[None]:
    build = httpx2.create_ssl_context
    default = functools.cache(lambda trust_env: build(True, None, trust_env))

    def create_ssl_context(verify: Any = True, cert: Any = None, trust_env: bool = True) -> ssl.SSLContext:
        if verify is True and cert is None:
            return default(trust_env)
        return build(verify, cert, trust_env)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(httpx2, "create_ssl_context", create_ssl_context)
        yield
