"""The one way chat and embedding clients are built: the `openai` SDK on its aiohttp transport.

The SDK's default httpx transport costs ~0.3 ms more CPU per call than aiohttp (measured with an instant
endpoint), which matters when ingestion makes thousands of calls on the event loop that also merges. The
aiohttp session is created by the transport on the first request, inside the running loop, so building a
client needs no loop; `close()` must run in that same loop (the app's lifespan does).
"""

from __future__ import annotations

import aiohttp
import httpx2
import openai
from openai._models import SecurityOptions
from openai._types import RequestOptions
from openai._vendor.httpx_aiohttp import AiohttpTransport  # what openai.DefaultAioHttpClient builds

from app.providers.budget import BudgetedTransport, CallBudget

# Options every direct `client.post` call sends, as the SDK's own resource methods do: bearer auth only.
BEARER_ONLY: SecurityOptions = {"bearer_auth": True}


def request_options(headers: dict[str, str] | None = None) -> RequestOptions:
    """The options of a direct `client.post`: bearer auth only, and any extra headers."""
    options: RequestOptions = {"security": BEARER_ONLY}
    if headers:
        options["headers"] = headers
    return options


def reported_count(value: object) -> int | None:
    """A token count from a provider's `usage`, or None when it is missing or not a count."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


class _HonestErrors(httpx2.AsyncBaseTransport):
    """The SDK's aiohttp transport reports every failed connection as a connect *timeout*, so a refused
    connection or a dropped keep-alive would read "Request timed out" in logs and document errors. Real
    timeouts stay timeouts; the rest become the connection errors httpx would have raised. Either way the
    SDK retries them alike."""

    def __init__(self, inner: AiohttpTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            return await self._inner.handle_async_request(request)
        except httpx2.ConnectTimeout as exc:
            cause = exc.__cause__
            if isinstance(cause, aiohttp.ServerTimeoutError) or not isinstance(cause, aiohttp.ClientConnectionError):
                raise
            kind = httpx2.ConnectError if isinstance(cause, aiohttp.ClientConnectorError) else httpx2.ReadError
            raise kind(str(exc), request=request) from cause

    async def aclose(self) -> None:
        await self._inner.aclose()


def openai_client(
    *, base_url: str | None, api_key: str, timeout: float, max_retries: int, budget: CallBudget | None = None
) -> openai.AsyncOpenAI:
    """`budget`: the fleet's budget every request (retries included) must pass first (None: no limit)."""
    transport: httpx2.AsyncBaseTransport = _HonestErrors(AiohttpTransport(limits=openai.DEFAULT_CONNECTION_LIMITS))
    if budget is not None:
        transport = BudgetedTransport(transport, budget)
    return openai.AsyncOpenAI(
        base_url=base_url,
        api_key=api_key,
        timeout=timeout,
        max_retries=max_retries,
        http_client=openai.DefaultAioHttpClient(timeout=timeout, transport=transport),
    )


def parse_completion(data: object) -> tuple[str, str | None, int | None, int | None]:
    """(text, finish_reason, prompt_tokens, completion_tokens) of a chat-completions JSON body; token
    counts are None where the provider did not report them. ValueError for a body without an answer."""
    if not isinstance(data, dict):
        raise ValueError("response has no choices")
    choices = data.get("choices")
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
        raise ValueError("response has no choices")
    message = choices[0].get("message")
    content = (message.get("content") if isinstance(message, dict) else None) or ""
    if not isinstance(content, str):
        raise ValueError(f"response content is a {type(content).__name__}, not text")
    finish_reason = choices[0].get("finish_reason")
    usage = data.get("usage")
    if not isinstance(usage, dict):
        usage = {}
    return (
        content,
        finish_reason if isinstance(finish_reason, str) else None,
        reported_count(usage.get("prompt_tokens")),
        reported_count(usage.get("completion_tokens")),
    )
