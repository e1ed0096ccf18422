"""HTTP access to a running service: one httpx client per command, every failure turned into a CliError."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
import typer

from app.cli.errors import EXIT_AUTH, EXIT_FAILED, EXIT_UNREACHABLE, CliError
from app.domain.wal_positions import parse_lsn

DEFAULT_URL = "http://127.0.0.1:9621"
_CLIENT_KEY = "lightrag_service.client"
READ_AFTER_HEADER = "X-Read-After-LSN"


@dataclass(frozen=True)
class Connection:
    """Where the service is and how to talk to it (from the global options or their environment variables)."""

    url: str
    api_key: str | None
    project: str
    timeout: float


def path_part(value: str) -> str:
    """A document or project id as one URL path segment (ids may hold spaces, '?', '#' or '%')."""
    return quote(value, safe="")


def _detail_text(detail: Any) -> str:
    if isinstance(detail, list):  # request validation errors: [{loc, msg, type}, ...]
        parts = []
        for item in detail:
            if isinstance(item, dict):
                loc = ".".join(str(p) for p in item.get("loc", []) if p != "body")
                parts.append(f"{loc}: {item.get('msg', '')}" if loc else str(item.get("msg", "")))
            else:
                parts.append(str(item))
        return "; ".join(parts)
    return str(detail)


def error_body(response: httpx.Response) -> tuple[str | None, str]:
    """The (code, detail) of an error answer, detail as one readable line."""
    try:
        body = response.json()
    except ValueError:
        body = None
    detail, code = (body.get("detail"), body.get("code")) if isinstance(body, dict) else (None, None)
    text = _detail_text(detail) if detail else (response.text.strip()[:200] or response.reason_phrase)
    return (str(code) if code else None), text


def error_of(response: httpx.Response) -> CliError:
    """The service's {detail, code} error as one line, with a hint for the usual causes."""
    code, text = error_body(response)
    status = response.status_code
    message = f"HTTP {status}{f' {code}' if code else ''}: {text}"
    if status == 401:
        return CliError(f"{message} (pass --api-key or set LIGHTRAG_API_KEY)", EXIT_AUTH)
    if status == 403:
        return CliError(message, EXIT_AUTH)
    retry_after = response.headers.get("retry-after")
    if status == 503 and retry_after:
        message += f" (retry after {retry_after} s)"
    return CliError(message, EXIT_FAILED)


@contextlib.contextmanager
def _transport_errors(conn: Connection) -> Iterator[None]:
    try:
        yield
    except httpx.ConnectError as exc:
        reason = str(exc) or "connection failed"
        raise CliError(
            f"cannot connect to the service at {conn.url}: {reason}; is it running? "
            "(start it with `lightrag-service serve`, or point --url / LIGHTRAG_URL at it)",
            EXIT_UNREACHABLE,
        ) from None
    except httpx.TimeoutException:
        raise CliError(
            f"the service at {conn.url} did not answer within {conn.timeout:g} s (raise --timeout / LIGHTRAG_TIMEOUT)",
            EXIT_UNREACHABLE,
        ) from None
    except httpx.HTTPError as exc:
        raise CliError(
            f"connection to the service at {conn.url} failed: {type(exc).__name__}: {exc}", EXIT_UNREACHABLE
        ) from None


def _lsn_order(text: str) -> int | None:
    try:
        return parse_lsn(text)
    except ValueError:  # not a position: ignored, as a server that does not send one
        return None


class _ReadAfter:
    """Read-your-writes behind read replicas: the service labels answers with the WAL position they saw; the
    highest one is sent back with every later request, so a read served by any API process (and its replica)
    waits until it sees what this command wrote or was told is processed."""

    def __init__(self) -> None:
        self.position: str | None = None
        self._order = -1

    def on_request(self, request: httpx.Request) -> None:
        if self.position is not None:
            request.headers[READ_AFTER_HEADER] = self.position

    def on_response(self, response: httpx.Response) -> None:
        seen = response.headers.get(READ_AFTER_HEADER)
        order = _lsn_order(seen) if seen else None
        if order is not None and order > self._order:
            self.position, self._order = seen, order


class ServiceClient:
    """Requests to the service; a non-2xx answer raises CliError unless its status is listed in `accept`."""

    def __init__(self, conn: Connection, transport: httpx.BaseTransport | None = None) -> None:
        self.conn = conn
        headers = {"User-Agent": "lightrag-service-cli"}
        if conn.api_key:
            headers["Authorization"] = f"Bearer {conn.api_key}"
        self.read_after = _ReadAfter()
        self._http = httpx.Client(
            base_url=conn.url,
            headers=headers,
            transport=transport,
            event_hooks={"request": [self.read_after.on_request], "response": [self.read_after.on_response]},
            timeout=httpx.Timeout(conn.timeout, connect=min(conn.timeout, 10.0)),
        )

    def __enter__(self) -> ServiceClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    @property
    def project(self) -> str:
        return self.conn.project

    def call(self, method: str, path: str, *, accept: tuple[int, ...] = (), **kwargs: Any) -> httpx.Response:
        with _transport_errors(self.conn):
            response = self._http.request(method, path, **kwargs)
        if response.is_error and response.status_code not in accept:
            raise error_of(response)
        return response

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.call(method, path, **kwargs)
        try:
            return response.json()
        except ValueError:
            raise CliError(
                f"{method} {path}: the service answered with something other than JSON "
                f"(is {self.conn.url} a LightRAG service?)"
            ) from None

    @contextlib.contextmanager
    def stream(self, method: str, path: str, **kwargs: Any) -> Iterator[httpx.Response]:
        """A streamed response, open while the block runs; transport failures while reading become CliError."""
        with _transport_errors(self.conn), self._http.stream(method, path, **kwargs) as response:
            if response.is_error:
                response.read()
                raise error_of(response)
            yield response


def service(ctx: typer.Context) -> ServiceClient:
    """The HTTP client of this invocation (from the global options), closed when the command ends."""
    root = ctx.find_root()
    client = root.meta.get(_CLIENT_KEY)
    if client is None:
        client = root.meta[_CLIENT_KEY] = root.with_resource(ServiceClient(root.obj))
    return client
