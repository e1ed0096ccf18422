"""What every export writer consumes: a project's graph as sections (entities, relations, chunks) of typed
columns, each section an async stream of row batches read from the database.

Rows are plain tuples in column order. Cell kinds tell writers how to render a value:
TEXT (str), NUMBER (int/float), LIST (list[str]) and VECTOR (a JSON array as text, or None).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from sqlalchemy.engine import RowMapping

from app.domain.texts import SEP, readable


class Kind(Enum):
    TEXT = "text"
    NUMBER = "number"
    LIST = "list"
    VECTOR = "vector"


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    kind: Kind
    width: int  # spreadsheet column width, in characters


Row = tuple[Any, ...]


@dataclass(slots=True)
class Section:
    name: str  # "entities" — file / JSON key
    title: str  # "Entities" — sheet / heading
    columns: tuple[Column, ...]
    headline: int  # how many leading columns name a row in readable (txt) output
    batches: AsyncIterator[list[Row]]


@dataclass(slots=True)
class GraphExport:
    project_id: str
    counts: dict[str, int]
    sections: list[Section]


VECTOR = Column("vector", Kind.VECTOR, 40)

ENTITY_COLUMNS = (
    Column("name", Kind.TEXT, 30),
    Column("type", Kind.TEXT, 16),
    Column("aliases", Kind.LIST, 30),
    Column("description", Kind.TEXT, 80),
    Column("source_ids", Kind.LIST, 40),
    Column("file_paths", Kind.LIST, 30),
    Column("degree", Kind.NUMBER, 8),
)
RELATION_COLUMNS = (
    Column("source", Kind.TEXT, 30),
    Column("target", Kind.TEXT, 30),
    Column("keywords", Kind.TEXT, 30),
    Column("description", Kind.TEXT, 80),
    Column("weight", Kind.NUMBER, 8),
    Column("source_ids", Kind.LIST, 40),
    Column("file_paths", Kind.LIST, 30),
)
CHUNK_COLUMNS = (
    Column("id", Kind.TEXT, 38),
    Column("document_id", Kind.TEXT, 38),
    Column("order", Kind.NUMBER, 8),
    Column("tokens", Kind.NUMBER, 8),
    Column("content", Kind.TEXT, 80),
    Column("file_path", Kind.TEXT, 30),
)


def entity_row(r: RowMapping) -> Row:
    return (
        r["name"],
        r["entity_type"],
        list(r["aliases"]),
        readable(r["description"]),
        list(r["source_ids"]),
        list(r["file_paths"]),
        r["degree"],
    )


def relation_row(r: RowMapping) -> Row:
    return (
        r["source"],
        r["target"],
        r["keywords"],
        readable(r["description"]),
        r["weight"],
        list(r["source_ids"]),
        list(r["file_paths"]),
    )


def chunk_row(r: RowMapping) -> Row:
    return (r["id"], r["document_id"], r["order_index"], r["tokens"], r["content"], r["file_path"] or "")


async def rows_of(
    batches: AsyncIterator[list[RowMapping]], convert: Callable[[RowMapping], Row], vectors: bool
) -> AsyncIterator[list[Row]]:
    async for batch in batches:
        if vectors:
            yield [(*convert(r), r["vector"]) for r in batch]
        else:
            yield [convert(r) for r in batch]


def joined(values: list[str]) -> str:
    """A list cell in flat formats: joined with the official `<SEP>` separator, as LightRAG stores them."""
    return SEP.join(values)
