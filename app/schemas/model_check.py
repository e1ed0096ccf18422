"""Response model of GET /health/llm: the configured models, and with deep=true the model check's report."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class CallCheck(BaseModel):
    call: Literal["extract", "glean", "keywords", "summary", "embedding"]
    ok: bool
    latency_ms: int
    prompt_tokens: int
    completion_tokens: int
    runaway: Literal["length", "loop"] | None = Field(None, description="cut by its max_tokens cap, or looping")
    error: str | None = None


class ModelCheckOut(BaseModel):
    model: str
    embedding_model: str
    extraction_format: str
    calls: list[CallCheck]
    records_parsed: int
    records_unparseable: int
    entities: list[str]
    facts_found: int
    facts_total: int
    keywords_json: Literal["valid", "repaired", "invalid"]
    summary_ok: bool
    embedding_dim: int | None
    embedding_dim_expected: int
    verdict: Literal["good", "usable", "not recommended"]
    reasons: list[str]


class LLMHealthOut(BaseModel):
    configuration: dict[str, Any] = Field(description="LLM and embedding settings in force (no secrets)")
    check: ModelCheckOut | None = Field(None, description="The model check's report (deep=true only)")
