"""Domain errors carry their HTTP status and a machine-readable code; one handler renders them."""

from __future__ import annotations

from app.core.error_codes import ErrorCode


class AppError(Exception):
    status_code = 400
    code: ErrorCode = "bad_request"

    def __init__(self, detail: str, *, code: ErrorCode | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        if code:
            self.code = code


class BadRequest(AppError):
    status_code = 400
    code: ErrorCode = "bad_request"


class InvalidInput(AppError):
    status_code = 422
    code: ErrorCode = "invalid_input"


class Unauthorized(AppError):
    status_code = 401
    code: ErrorCode = "unauthorized"


class Forbidden(AppError):
    status_code = 403
    code: ErrorCode = "forbidden"


class NotFound(AppError):
    status_code = 404
    code: ErrorCode = "not_found"


def project_not_found(project_id: str) -> NotFound:
    return NotFound(f"Project '{project_id}' not found", code="project_not_found")


def document_not_found(document_id: str) -> NotFound:
    return NotFound(f"Document '{document_id}' not found", code="document_not_found")


class ClientDisconnected(AppError):
    status_code = 499  # "client closed request": nobody reads it, but metrics and access logs show it
    code: ErrorCode = "client_disconnected"


class Conflict(AppError):
    status_code = 409
    code: ErrorCode = "conflict"


class PayloadTooLarge(AppError):
    status_code = 413
    code: ErrorCode = "payload_too_large"


class ServiceUnavailable(AppError):
    status_code = 503
    code: ErrorCode = "service_unavailable"


class LLMNotConfigured(ServiceUnavailable):
    code: ErrorCode = "llm_not_configured"

    def __init__(self) -> None:
        super().__init__(
            "No LLM is configured: set LLM_MODEL and LLM_BASE_URL (and LLM_API_KEY if the endpoint needs one)."
        )


class EmbeddingNotConfigured(ServiceUnavailable):
    code: ErrorCode = "embedding_not_configured"

    def __init__(self) -> None:
        super().__init__(
            "No embedding model is configured: set EMBEDDING_MODEL and EMBEDDING_BASE_URL "
            "(or LLM_BASE_URL), plus EMBEDDING_API_KEY if the endpoint needs one."
        )


class ProviderError(ServiceUnavailable):
    """An LLM/embedding/rerank provider failed: after its retries, or at once for what a retry cannot mend (a
    refused key, an unknown model or URL)."""

    code: ErrorCode = "provider_error"


def first_failure(group: BaseExceptionGroup) -> BaseException:
    """The first real failure inside (possibly nested) exception groups, e.g. from an asyncio.TaskGroup."""
    first = group.exceptions[0]
    return first_failure(first) if isinstance(first, BaseExceptionGroup) else first
