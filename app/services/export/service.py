"""Graph export: checks the project, then streams one format from keyset batches read one at a time."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass

from app.container import Container
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
from app.services.projects import require_project


@dataclass(frozen=True, slots=True)
class ExportOptions:
    format: ExportFormat
    include_vectors: bool = False
    include_chunks: bool = False


@dataclass(slots=True)
class ExportDownload:
    filename: str
    media_type: str
    body: AsyncGenerator[bytes, None]


class ExportService:
    def __init__(self, c: Container, batch_size: int = repo.BATCH_SIZE) -> None:
        self.db = c.db
        self.batch_size = batch_size

    async def download(self, project_id: str, options: ExportOptions) -> ExportDownload:
        """404 for an unknown project now (before any byte is sent); the body is produced while it is read."""
        async with self.db.read() as conn:
            await require_project(conn, project_id)
        spec = FORMATS[options.format]
        return ExportDownload(
            filename=f"{project_id}-graph.{spec.extension}",
            media_type=spec.media_type,
            body=self.stream(project_id, options),
        )

    async def stream(self, project_id: str, options: ExportOptions) -> AsyncGenerator[bytes, None]:
        """No database connection is held between batches, so none while the consumer waits on `yield`."""
        writer = FORMATS[options.format].writer
        counts = await repo.counts(self.db, project_id)
        chunks = writer(GraphExport(project_id, counts, self._sections(project_id, options)))
        try:
            async for data in chunks:
                if data:
                    yield data
        finally:
            await chunks.aclose()

    def _sections(self, project_id: str, options: ExportOptions) -> list[Section]:
        db, vectors, size = self.db, options.include_vectors, self.batch_size
        extra = (VECTOR,) if vectors else ()
        sections = [
            Section(
                "entities",
                "Entities",
                ENTITY_COLUMNS + extra,
                1,
                rows_of(repo.entity_batches(db, project_id, vectors=vectors, batch_size=size), entity_row, vectors),
            ),
            Section(
                "relations",
                "Relations",
                RELATION_COLUMNS + extra,
                2,
                rows_of(repo.relation_batches(db, project_id, vectors=vectors, batch_size=size), relation_row, vectors),
            ),
        ]
        if options.include_chunks:
            sections.append(
                Section(
                    "chunks",
                    "Chunks",
                    CHUNK_COLUMNS + extra,
                    1,
                    rows_of(repo.chunk_batches(db, project_id, vectors=vectors, batch_size=size), chunk_row, vectors),
                )
            )
        return sections
