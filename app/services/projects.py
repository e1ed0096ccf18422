"""Projects: creation, listing with counts, per-project setting overrides, deletion."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from app.container import Container
from app.core.config import Settings
from app.core.errors import Conflict, project_not_found
from app.domain.projects import DEFAULT_PROJECT, ProjectRow
from app.repositories import projects as repo
from app.schemas.projects import (
    EffectiveSettings,
    ProjectCounts,
    ProjectCreate,
    ProjectOut,
    ProjectSettings,
    ProjectUpdate,
)

DEFAULT_PROJECT_NAME = "Default project"


def effective_settings(settings: Settings, overrides: dict | None) -> EffectiveSettings:
    """The service-wide settings with a project's overrides applied."""
    o = ProjectSettings.model_validate(overrides or {})
    size = o.chunk_size if o.chunk_size is not None else settings.chunk_size
    overlap = o.chunk_overlap_size if o.chunk_overlap_size is not None else settings.chunk_overlap_size
    return EffectiveSettings(
        entity_types=o.entity_types or settings.entity_types,
        language=o.language or settings.summary_language,
        chunk_size=size,
        chunk_overlap_size=min(overlap, size - 1),
        chunk_split_by_character=o.chunk_split_by_character or settings.chunk_split_by_character,
        chunk_split_by_character_only=(
            o.chunk_split_by_character_only
            if o.chunk_split_by_character_only is not None
            else settings.chunk_split_by_character_only
        ),
        max_gleaning=o.max_gleaning if o.max_gleaning is not None else settings.max_gleaning,
    )


async def require_project(conn: AsyncConnection, project_id: str) -> None:
    """Raise 404 unless the project exists. The one existence check of a request: services run it first
    on the connection or transaction they already use for the request's own work."""
    if not await repo.exists(conn, project_id):
        raise project_not_found(project_id)


class ProjectService:
    def __init__(self, c: Container) -> None:
        self.db = c.db
        self.settings = c.settings

    def _out(self, row: ProjectRow) -> ProjectOut:
        totals = row.totals
        assert totals is not None, "read with_counts"
        return ProjectOut(
            id=row.id,
            name=row.name,
            settings=ProjectSettings.model_validate(row.settings or {}),
            effective_settings=effective_settings(self.settings, row.settings),
            counts=ProjectCounts(
                documents=totals.documents, chunks=totals.chunks, entities=totals.entities, relations=totals.relations
            ),
            created_at=row.created_at,
            updated_at=row.updated_at,
        )

    async def create(self, body: ProjectCreate) -> ProjectOut:
        overrides = body.settings.model_dump(exclude_none=True) if body.settings else {}
        async with self.db.transaction() as conn:
            if not await repo.create(conn, body.id, body.name or body.id, overrides):
                raise Conflict(f"Project '{body.id}' already exists", code="project_exists")
        return await self.get(body.id)

    async def get(self, project_id: str) -> ProjectOut:
        async with self.db.connect() as conn:
            row = await repo.get(conn, project_id, with_counts=True)
        if row is None:
            raise project_not_found(project_id)
        return self._out(row)

    async def list(self, allowed: set[str] | None = None) -> list[ProjectOut]:
        async with self.db.connect() as conn:
            rows = await repo.list_all(conn, allowed)
        return [self._out(r) for r in rows]

    async def update(self, project_id: str, body: ProjectUpdate) -> ProjectOut:
        values: dict = {}
        if body.name is not None:
            values["name"] = body.name
        if body.settings is not None:
            values["settings"] = body.settings.model_dump(exclude_none=True)
        async with self.db.transaction() as conn:
            await require_project(conn, project_id)
            if values:
                await repo.update_fields(conn, project_id, values)
        return await self.get(project_id)

    async def delete(self, project_id: str) -> None:
        """Delete a project and everything in it. `default` always exists: deleting it empties it."""
        async with self.db.transaction() as conn:
            if project_id == DEFAULT_PROJECT:
                await repo.recreate_empty(conn, DEFAULT_PROJECT, DEFAULT_PROJECT_NAME)
            elif not await repo.delete_one(conn, project_id):
                raise project_not_found(project_id)

    async def overrides(self, project_id: str) -> EffectiveSettings:
        async with self.db.connect() as conn:
            row = await repo.get(conn, project_id)
        if row is None:
            raise project_not_found(project_id)
        return effective_settings(self.settings, row.settings)
