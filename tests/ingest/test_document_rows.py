"""The typed rows the documents and projects repositories return stay in step with their tables: from_row
keeps only the fields a row type declares, so a new column without its field would vanish silently."""

from __future__ import annotations

from dataclasses import fields

from app.db.tables import documents, projects
from app.domain.document_rows import DocumentRow
from app.domain.projects import ProjectRow, ProjectTotals


def _names(row_type: type) -> set[str]:
    return {f.name for f in fields(row_type)}


def test_a_document_row_has_every_column_and_the_listing_summary():
    assert _names(DocumentRow) == {c.name for c in documents.c} | {"content_summary"}


def test_a_project_row_has_every_column_and_its_totals():
    assert _names(ProjectRow) == {c.name for c in projects.c} | {"totals"}
    assert _names(ProjectTotals) == {"documents", "chunks", "entities", "relations"}
