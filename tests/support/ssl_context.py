"""Build the default TLS context once per test process instead of once per HTTP client.

Every httpx client builds an `ssl.SSLContext` from the certificate bundle when it is created (~25 ms of
certificate parsing): the providers' clients at every app start, and the test's own clients (CLI, chat and
compat protocol tests) for each test, although the tests only speak plain HTTP to loopback servers. A
context is safe to share between connections, so the default one is built once. Both httpx packages are
covered (httpx2 is the one the openai SDK uses), at the names their transports call.
"""

from __future__ import annotations

import functools
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import httpx2
import pytest


def _shared(build: Any) -> Any:
    default = functools.cache(lambda trust_env: build(True, None, trust_env))

    def create_ssl_context(verify: Any = True, cert: Any = None, trust_env: bool = True) -> ssl.SSLContext:
        if verify is True and cert is None:
            return default(trust_env)
        return build(verify, cert, trust_env)

    return create_ssl_context


@contextmanager
def shared_default_ssl_context() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        for package, transports in ((httpx, httpx._transports.default), (httpx2, httpx2._transports.default)):
            shared = _shared(package.create_ssl_context)
            patch.setattr(package, "create_ssl_context", shared)
            patch.setattr(transports, "create_ssl_context", shared)
        yield
