"""LightRAG Server's /health on top of the service's readiness report and the project's queue."""

from __future__ import annotations

from typing import Any

from app.container import Container
from app.core.errors import ServiceUnavailable
from app.services.health import health_report
from app.services.ingest.intake import IngestionService


async def lightrag_health(c: Container, project_id: str, auth_enabled: bool, version: str) -> dict[str, Any]:
    healthy, report = await health_report(c)
    if not healthy:
        raise ServiceUnavailable(
            f"Not ready: database {report['database']}, migrations {'ok' if report['migrations']['ok'] else 'behind'}",
            code="not_ready",
        )
    pipeline = await IngestionService(c).pipeline(project_id, {project_id})
    s = c.settings
    return {
        "status": "healthy",
        "workspace": project_id,
        "auth_mode": "enabled" if auth_enabled else "disabled",
        "pipeline_busy": pipeline.queue_depth > 0,
        "core_version": version,
        "api_version": version,
        "configuration": {
            "llm_binding": "openai",
            "llm_model": s.llm_model,
            "llm_configured": c.llm.configured,
            "embedding_binding": "openai",
            "embedding_model": s.embedding_model,
            "embedding_configured": c.embedder.configured,
            "embedding_dim": s.embedding_dim,
            "kv_storage": "PostgreSQL",
            "doc_status_storage": "PostgreSQL",
            "graph_storage": "PostgreSQL",
            "vector_storage": "pgvector",
            "workspace": project_id,
            "max_parallel_insert": s.max_parallel_insert,
            "enable_llm_cache": s.enable_llm_cache,
        },
    }
