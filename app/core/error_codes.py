"""Every machine-readable error code the service answers with, and what it means: one vocabulary for the code
that raises an error (`AppError(..., code=...)` is typed with `ErrorCode`, so the type checker refuses a code
missing here) and for the API's description of its error body (`schemas/errors.py::ErrorBody.code`)."""

from __future__ import annotations

from typing import Literal, get_args

ErrorCode = Literal[
    # any status: the generic code of each error class and of HTTP errors raised by the framework
    "bad_request",
    "invalid_input",
    "validation_error",
    "unauthorized",
    "forbidden",
    "not_found",
    "method_not_allowed",
    "conflict",
    "payload_too_large",
    "service_unavailable",
    "client_disconnected",
    "http_error",
    "internal_error",
    # auth and scope
    "missing_api_key",
    "invalid_api_key",
    "project_forbidden",
    "admin_key_required",
    # projects, documents, ingestion
    "project_not_found",
    "project_exists",
    "document_not_found",
    "document_processing",
    "document_merged",
    "document_not_cancellable",
    "document_not_failed",
    "document_not_processed",
    "not_a_document",
    "update_in_progress",
    "document_changed",
    "duplicate_content",
    "document_too_large",
    "too_many_documents",
    "invalid_documents",
    "empty_document",
    "invalid_chunking",
    "chunk_too_large",
    "file_too_large",
    "unsupported_file_type",
    "cannot_decode",
    "invalid_file",
    "parse_timeout",
    # graph curation
    "entity_not_found",
    "entity_exists",
    "invalid_entity_name",
    "invalid_description",
    "relation_not_found",
    "relation_exists",
    "self_relation",
    "same_entity",
    "alias_not_found",
    "alias_exists",
    "rename_not_allowed",
    "no_automatic_merge",
    "merge_entry_not_found",
    "merge_already_undone",
    # queries and chat
    "empty_query",
    "query_limits",
    "token_budget_too_small",
    "invalid_conversation",
    "no_user_message",
    "model_not_found",
    "answer_buffer_full",
    # capacity
    "too_many_streams",
    "streams_full",
    "export_busy",
    "graph_busy",
    # dependencies
    "database_unavailable",
    "llm_not_configured",
    "embedding_not_configured",
    "provider_error",
    "llm_context_exceeded",
    "llm_structured_output_rejected",
    # the LightRAG-compatible API
    "invalid_workspace",
    "not_ready",
    "not_supported",
]

ERROR_CODES: frozenset[str] = frozenset(get_args(ErrorCode))
