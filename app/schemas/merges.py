"""Request/response models for the ledger of automatic merges and for undoing them."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.schemas.deletion import LLMCalls
from app.schemas.graph import Name, ProjectField

MergeStatus = Literal["standing", "confirmed", "undone", "rejected"]


class MergeEntry(BaseModel):
    id: int
    entity: str = Field(description="The entity the names were merged into (its key when it is gone)")
    absorbed: list[str] = Field(description="The names merged into it")
    rule: str = Field(
        description="The rule that merged them (`partial`, `acronym`, `rule`, ...), the judge, or `accepted`"
    )
    by: Literal["rule", "judge", "review"] = Field(
        description="`rule` or `judge` for automatic merges, `review` for a duplicate suggestion a user accepted"
    )
    evidence: str
    document_id: str | None = Field(description="The document whose ingestion made the merge")
    file_name: str | None
    retroactive: bool = Field(description="An earlier node absorbed when this document named it in full")
    created_at: datetime
    status: MergeStatus = Field(
        description="`standing` (unreviewed), `confirmed` (accepted), `undone`, or `rejected` (undone and kept apart)"
    )
    undone_at: datetime | None
    confirmed_at: datetime | None


class MergeLedger(BaseModel):
    entries: list[MergeEntry]
    total: int
    limit: int
    offset: int


class MergeDecision(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"project_id": "default"}]})

    project_id: str = ProjectField


class UnmergeRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"project_id": "default"}, {"project_id": "default", "names": ["Dr. Okafor"]}]},
    )

    project_id: str = ProjectField
    names: list[Name] | None = Field(
        None,
        min_length=1,
        max_length=100,
        description="Absorbed names to restore; every merge the ledger holds into the entity when omitted",
    )
    entry_id: int | None = Field(None, ge=1, le=2**63 - 1, description="A ledger entry to undo (instead of `names`)")
    keep_apart: bool = Field(True, description="Record the pairs as distinct, so resolution never merges them again")

    @model_validator(mode="after")
    def _one_selector(self) -> UnmergeRequest:
        if self.names is not None and self.entry_id is not None:
            raise ValueError("give `names` or `entry_id`, not both")
        return self


class UnmergeReport(BaseModel):
    entity: str
    restored: list[str] = Field(description="The names that are separate entities again")
    entries: list[int] = Field(description="The ledger entries marked undone (or rejected)")
    relations_restored: int = Field(description="Relations of the restored entities rebuilt from their records")
    llm_calls: LLMCalls
