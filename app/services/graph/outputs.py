"""Stored graph rows as the curation API's response models (entities with their aliases, relations)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy.ext.asyncio import AsyncConnection

from app.domain.aliases import AliasRow
from app.domain.rows import EntityRow, RelationRow
from app.repositories import aliases as alias_repo
from app.schemas.graph import EntityOut, RelationOut


def entity_out(row: EntityRow, aliases: Iterable[AliasRow] = ()) -> EntityOut:
    return EntityOut(
        name=row.name,
        entity_type=row.entity_type,
        aliases=alias_names(aliases),
        description=row.description,
        degree=row.degree,
        file_paths=list(row.file_paths or []),
        curated=row.curated,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def alias_names(aliases: Iterable[AliasRow]) -> list[str]:
    """Each alias name once (one may be stored project-wide and for single documents), oldest first."""
    return list(dict.fromkeys(a.alias_name for a in aliases))


async def entities_out(conn: AsyncConnection, project_id: str, rows: Sequence[EntityRow]) -> list[EntityOut]:
    aliases = await alias_repo.aliases_of(conn, project_id, [r.key for r in rows])
    return [entity_out(r, aliases.get(r.key, ())) for r in rows]


async def entity_with_aliases(conn: AsyncConnection, project_id: str, row: EntityRow | None) -> EntityOut:
    assert row is not None  # read under the lock of the key the caller just wrote
    return (await entities_out(conn, project_id, [row]))[0]


def relation_out(row: RelationRow) -> RelationOut:
    return RelationOut(
        source=row.src_name,
        target=row.tgt_name,
        keywords=row.keywords,
        description=row.description,
        weight=row.weight,
        file_paths=list(row.file_paths or []),
        curated=row.curated,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )
