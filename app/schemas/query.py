"""Request/response models for /query. Defaults are official LightRAG's (QueryParam).

Static bounds live here (positive limits, known modes); bounds that depend on the service's settings
(max_top_k, max_token_limit, max_query_chars, history caps) are checked by the query service, also as 422.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator

from app.domain.projects import PROJECT_ID_PATTERN

QueryMode = Literal["local", "global", "hybrid", "mix", "naive", "bypass"]
ChunkSelection = Literal["vector", "weight"]
ChunkSource = Literal["vector", "entity", "relation"]

MAX_KEYWORDS = 64
MAX_KEYWORD_CHARS = 512


class HistoryMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant", "system"]
    content: str


class QueryRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{
        "project_id": "default",
        "query": "Who leads the platform team?",
        "mode": "mix",
        "top_k": 40,
        "conversation_history": [{"role": "user", "content": "Where is the platform team based?"},
                                 {"role": "assistant", "content": "In Berlin."}],
        "stream": False,
    }]})

    project_id: str = Field("default", pattern=PROJECT_ID_PATTERN)
    query: str = Field(..., min_length=1)
    mode: QueryMode = "mix"
    top_k: StrictInt = Field(40, gt=0, description="Entities (local) / relations (global) retrieved.")
    chunk_top_k: StrictInt = Field(20, gt=0, description="Chunks retrieved by vector search and kept at the end.")
    max_entity_tokens: StrictInt = Field(6000, gt=0)
    max_relation_tokens: StrictInt = Field(8000, gt=0)
    max_total_tokens: StrictInt = Field(30000, gt=0, description="Upper bound of everything sent to the answer LLM.")
    chunk_selection: ChunkSelection | None = Field(
        None, description="How chunks are picked from entities/relations; default KG_CHUNK_PICK_METHOD."
    )
    enable_rerank: bool = True
    only_need_context: bool = False
    only_need_prompt: bool = False
    response_type: str = Field("Multiple Paragraphs", min_length=1, max_length=256)
    conversation_history: list[HistoryMessage] = Field(default_factory=list)
    history_turns: StrictInt | None = Field(
        None, ge=0, description="Keep only the last N user/assistant turns of the history (default: all)."
    )
    hl_keywords: list[str] = Field(default_factory=list, max_length=MAX_KEYWORDS)
    ll_keywords: list[str] = Field(default_factory=list, max_length=MAX_KEYWORDS)
    user_prompt: str | None = Field(None, max_length=32 * 1024)
    stream: bool = False

    @field_validator("query")
    @classmethod
    def _query_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("query must not be blank")
        return value

    @field_validator("hl_keywords", "ll_keywords")
    @classmethod
    def _clean_keywords(cls, value: list[str]) -> list[str]:
        if any(len(k) > MAX_KEYWORD_CHARS for k in value):
            raise ValueError(f"each keyword must be at most {MAX_KEYWORD_CHARS} characters")
        cleaned: list[str] = []
        for keyword in value:
            keyword = keyword.strip()
            if keyword and keyword not in cleaned:
                cleaned.append(keyword)
        return cleaned


class Keywords(BaseModel):
    high_level: list[str] = Field(default_factory=list)
    low_level: list[str] = Field(default_factory=list)


class ContextEntity(BaseModel):
    name: str
    type: str
    description: str
    degree: int
    source_chunk_ids: list[str]
    file_paths: list[str]


class ContextRelation(BaseModel):
    source: str
    target: str
    keywords: str
    description: str
    weight: float
    source_chunk_ids: list[str]
    file_paths: list[str]


class ContextChunk(BaseModel):
    id: str
    document_id: str
    content: str
    file_path: str | None
    reference_id: str
    source: ChunkSource
    rerank_score: float | None = None


class QueryContext(BaseModel):
    entities: list[ContextEntity] = Field(default_factory=list)
    relations: list[ContextRelation] = Field(default_factory=list)
    chunks: list[ContextChunk] = Field(default_factory=list)


class Reference(BaseModel):
    reference_id: str
    document_id: str
    file_path: str | None


class QueryResponse(BaseModel):
    response: str | None
    mode: QueryMode
    keywords: Keywords
    context: QueryContext
    references: list[Reference]
    prompt: str | None = None
