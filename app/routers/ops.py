"""Operations: health and Prometheus metrics (never behind auth)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from app.auth import ProjectScopedRoute, unscoped
from app.deps import ContainerDep
from app.services.health import health_report, refresh_pipeline_gauges

router = APIRouter(tags=["operations"], route_class=ProjectScopedRoute)


@router.get("/health", responses={503: {"description": "Database unreachable or schema behind"}})
@unscoped
async def health(c: ContainerDep) -> JSONResponse:
    healthy, report = await health_report(c)
    return JSONResponse(report, status_code=200 if healthy else 503)


@router.get("/metrics", response_class=Response, responses={200: {"content": {"text/plain": {}}}})
@unscoped
async def prometheus_metrics(c: ContainerDep) -> Response:
    await refresh_pipeline_gauges(c)
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
