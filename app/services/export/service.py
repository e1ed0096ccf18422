"""Graph export: checks the project, then streams one format from a single consistent database snapshot."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.engine import Database
from app.repositories import export as repo
from app.services.export.formats import FORMATS, ExportFormat
from app.services.export.model import (
    CHUNK_COLUMNS,
    ENTITY_COLUMNS,
    RELATION_COLUMNS,
    VECTOR,
    GraphExport,
    Section,
    chunk_row,
    entity_row,
    relation_row,
    rows_of,
)
from app.services.projects import ProjectService


@dataclass(frozen=True, slots=True)
class ExportOptions:
    format: ExportFormat
    include_vectors: bool = False
    include_chunks: bool = False


@dataclass(slots=True)
class ExportDownload:
    filename: str
    media_type: str
    body: AsyncIterator[bytes]


class ExportService:
    def __init__(self, db: Database, projects: ProjectService, batch_size: int = repo.BATCH_SIZE) -> None:
        self.db = db
        self.projects = projects
        self.batch_size = batch_size

    async def download(self, project_id: str, options: ExportOptions) -> ExportDownload:
        """404 for an unknown project now (before any byte is sent); the body is produced while it is read."""
        await self.projects.require(project_id)
        spec = FORMATS[options.format]
        return ExportDownload(
            filename=f"{project_id}-graph.{spec.extension}",
            media_type=spec.media_type,
            body=self.stream(project_id, options),
        )

    async def stream(self, project_id: str, options: ExportOptions) -> AsyncIterator[bytes]:
        writer = FORMATS[options.format].writer
        async with repo.snapshot(self.db) as conn:
            counts = await repo.counts(conn, project_id)
            export = GraphExport(project_id, counts, self._sections(conn, project_id, options))
            chunks = writer(export)
            try:
                async for data in chunks:
                    if data:
                        yield data
            finally:
                await chunks.aclose()

    def _sections(self, conn: AsyncConnection, project_id: str, options: ExportOptions) -> list[Section]:
        vectors = options.include_vectors
        extra = (VECTOR,) if vectors else ()
        size = self.batch_size
        sections = [
            Section("entities", "Entities", ENTITY_COLUMNS + extra, 1, rows_of(
                repo.entity_batches(conn, project_id, vectors=vectors, batch_size=size), entity_row, vectors)),
            Section("relations", "Relations", RELATION_COLUMNS + extra, 2, rows_of(
                repo.relation_batches(conn, project_id, vectors=vectors, batch_size=size), relation_row, vectors)),
        ]
        if options.include_chunks:
            sections.append(Section("chunks", "Chunks", CHUNK_COLUMNS + extra, 1, rows_of(
                repo.chunk_batches(conn, project_id, vectors=vectors, batch_size=size), chunk_row, vectors)))
        return sections
