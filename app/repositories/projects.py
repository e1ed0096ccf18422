"""SQL for projects."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables import chunks, documents, entities, projects, relations
from app.domain.projects import ProjectRow, ProjectTotals
from app.repositories.documents import USER_DOCUMENT


def _count(table: Any, *where: Any) -> Any:
    return select(func.count()).select_from(table).where(table.c.project_id == projects.c.id, *where).scalar_subquery()


_WITH_COUNTS = select(
    projects,
    _count(documents, USER_DOCUMENT).label("documents"),  # as GET /documents counts them
    _count(chunks).label("chunks"),
    _count(entities).label("entities"),
    _count(relations).label("relations"),
)


def _project(row: Any, *, with_counts: bool) -> ProjectRow:
    return ProjectRow.from_row(row, totals=ProjectTotals.from_row(row) if with_counts else None)


async def get(conn: AsyncConnection, project_id: str, *, with_counts: bool = False) -> ProjectRow | None:
    query = _WITH_COUNTS if with_counts else select(projects)
    row = (await conn.execute(query.where(projects.c.id == project_id))).mappings().first()
    return _project(row, with_counts=with_counts) if row else None


async def exists(conn: AsyncConnection, project_id: str) -> bool:
    found = await conn.scalar(select(projects.c.id).where(projects.c.id == project_id))
    return found is not None


async def list_all(conn: AsyncConnection, allowed: set[str] | None = None) -> list[ProjectRow]:
    """Every project (or those in `allowed`) with its totals."""
    query = _WITH_COUNTS.order_by(projects.c.id)
    if allowed is not None:
        query = query.where(projects.c.id.in_(allowed))
    return [_project(r, with_counts=True) for r in (await conn.execute(query)).mappings()]


async def create(conn: AsyncConnection, project_id: str, name: str, settings: dict) -> bool:
    """Insert; False when the id is taken."""
    result = await conn.execute(
        pg_insert(projects)
        .values(id=project_id, name=name, settings=settings)
        .on_conflict_do_nothing(index_elements=["id"])
    )
    return result.rowcount == 1


async def ensure(conn: AsyncConnection, project_id: str, name: str) -> None:
    await conn.execute(
        pg_insert(projects).values(id=project_id, name=name).on_conflict_do_nothing(index_elements=["id"])
    )


async def update_fields(conn: AsyncConnection, project_id: str, values: dict) -> bool:
    result = await conn.execute(
        update(projects).where(projects.c.id == project_id).values(**values, updated_at=func.now())
    )
    return result.rowcount == 1


async def delete_one(conn: AsyncConnection, project_id: str) -> bool:
    result = await conn.execute(delete(projects).where(projects.c.id == project_id))
    return result.rowcount == 1


async def recreate_empty(conn: AsyncConnection, project_id: str, name: str) -> None:
    """Drop everything in a project and put back an empty row with the same id."""
    await conn.execute(delete(projects).where(projects.c.id == project_id))
    await conn.execute(insert(projects).values(id=project_id, name=name))
