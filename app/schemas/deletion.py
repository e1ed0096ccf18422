"""Response of DELETE /documents/{id}."""

from __future__ import annotations

from pydantic import BaseModel


class LLMCalls(BaseModel):
    extract: int   # always 0: the graph is rebuilt from cached extraction answers
    summary: int   # summaries of rebuilt descriptions that crossed the thresholds (cache hits not counted)


class DocumentDeletion(BaseModel):
    document_id: str
    chunks_deleted: int
    entities_deleted: int
    entities_rebuilt: int
    relations_deleted: int
    relations_rebuilt: int
    llm_calls: LLMCalls
