"""What a failed provider call tells the user: the HTTP status the provider answered and, for the statuses that
mean a setting is wrong, which setting to check. The SDK retries only timeouts, connection errors, 408, 409, 429
and 5xx, so a 404 (a base URL without its /v1, a model the endpoint does not serve) or a 401 (a refused key)
comes back at once and is not "failed after retries"."""

from __future__ import annotations

import openai

_HINTS = {
    401: "the key {p}_API_KEY was refused",
    403: "the key {p}_API_KEY may not use this endpoint or model",
    404: "check {p}_BASE_URL, the API's root (most end in /v1), and {p}_MODEL, a model the endpoint serves",
}


def provider_message(exc: openai.APIStatusError) -> str:
    """The provider's own message (OpenAI shape: {"error": {"message": ...}}), cut short."""
    body = exc.body
    error = body.get("error", body) if isinstance(body, dict) else body
    message = error.get("message") if isinstance(error, dict) else error
    return str(message or exc.message)[:300]


def failure_message(what: str, exc: Exception) -> str:
    """`what`: "LLM" or "Embedding", whose settings are named in capitals (LLM_BASE_URL, EMBEDDING_BASE_URL). Only
    the request's path is named, not the endpoint's host: the message reaches API clients (a document's error, a
    query's 502)."""
    setting_prefix = what.upper()
    if isinstance(exc, openai.APIStatusError):
        status, path = exc.status_code, exc.request.url.path
        retried = status in (408, 409, 429) or status >= 500  # what the SDK retries
        hint = _HINTS.get(status)
        said = f"HTTP {status} for {exc.request.method} {path}{' after retries' if retried else ''}"
        message = f"{what} request {'failed' if retried else 'refused'}: {said}: {provider_message(exc)}"
        return message + (f"; {hint.format(p=setting_prefix)}" if hint else "")
    if isinstance(exc, openai.APITimeoutError):
        return f"{what} request timed out after retries ({setting_prefix}_TIMEOUT)"
    if isinstance(exc, openai.APIConnectionError):
        return f"{what} endpoint unreachable after retries (check {setting_prefix}_BASE_URL): {exc}"
    return f"{what} request failed: {type(exc).__name__}: {exc}"
