"""Operations: health and Prometheus metrics (never behind auth), and the model check (behind API keys)."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST

from app.core import metrics
from app.core.errors import Forbidden
from app.schemas.model_check import LLMHealthOut
from app.services.health import health_report, refresh_pipeline_gauges
from app.services.model_check.check import ModelCheck, llm_configuration
from app.web.auth import ProjectScopedRoute, principal_of, unscoped
from app.web.deps import ContainerDep
from app.web.openapi import HEALTH_REPORT_CONTENT, errors

router = APIRouter(tags=["operations"], route_class=ProjectScopedRoute)


@router.get(
    "/health",
    name="get_health",
    responses={
        200: {"description": "Ready", "content": HEALTH_REPORT_CONTENT},
        503: {"description": "Database unreachable or schema behind", "content": HEALTH_REPORT_CONTENT},
    },
)
@unscoped
async def health(c: ContainerDep) -> JSONResponse:
    healthy, report = await health_report(c)
    return JSONResponse(report, status_code=200 if healthy else 503)


@router.get("/metrics", response_class=Response, responses={200: {"content": {"text/plain": {}}}}, name="get_metrics")
@unscoped
async def prometheus_metrics(c: ContainerDep) -> Response:
    await refresh_pipeline_gauges(c)
    return Response(metrics.exposition(), media_type=CONTENT_TYPE_LATEST)


_SCOPED_CHECK = (403, "A key scoped to projects asked for the model check (`admin_key_required`)")


@router.get("/health/llm", name="check_llm", response_model=LLMHealthOut, responses=errors(_SCOPED_CHECK, 503))
@unscoped
async def check_llm(
    c: ContainerDep,
    request: Request,
    deep: bool = Query(
        False,
        description="Run the model check: one extraction, gleaning, keyword, summary and "
        "embedding call on a built-in text (takes as long as those calls); "
        "keys for every project only",
    ),
) -> LLMHealthOut:
    """The configured LLM and embedding model; with deep=true, whether they are good enough to ingest with.

    A key scoped to projects sees the configuration without the provider URL and may not run the check
    (it spends LLM calls that belong to no project)."""
    admin = principal_of(request).allowed_projects is None
    if deep and not admin:
        raise Forbidden("The model check needs a key for every project", code="admin_key_required")
    configuration = llm_configuration(c.llm, c.embedder, c.settings)
    if not admin:
        configuration["llm"].pop("base_url")
    if not deep:
        return LLMHealthOut(configuration=configuration)
    report = await ModelCheck(c.llm, c.embedder, c.settings).run()
    return LLMHealthOut.model_validate({"configuration": configuration, "check": report.as_dict()})
