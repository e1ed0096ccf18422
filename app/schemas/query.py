"""Request/response models for /query. Defaults are official LightRAG's (QueryParam).

Static bounds live here (positive limits, known modes); bounds that depend on the service's settings
(max_top_k, max_token_limit, max_query_chars, history caps) are checked by the query service, also as 422.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictInt

from app.domain.projects import PROJECT_ID_PATTERN
from app.domain.query_plan import ChunkSelection, QueryMode
from app.schemas.common import MAX_HISTORY_ITEMS, MAX_KEYWORDS, MaxItems, SafeStr

ChunkSource = Literal["vector", "entity", "relation"]

MAX_KEYWORD_CHARS = 512


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("query must not be blank")
    return value


def _clean_keywords(value: list[str]) -> list[str]:
    cleaned: list[str] = []
    for keyword in value:
        keyword = keyword.strip()
        if keyword and keyword not in cleaned:
            cleaned.append(keyword)
    return cleaned


# Field types of a query, shared with the LightRAG Server compatibility request (app/adapters/lightrag/schemas.py).
QueryText = Annotated[SafeStr, Field(min_length=1), AfterValidator(_not_blank)]
PositiveCount = Annotated[StrictInt, Field(gt=0)]
HistoryTurns = Annotated[
    StrictInt, Field(ge=0, description="Keep only the last N user/assistant turns of the history (default: all).")
]
ResponseType = Annotated[SafeStr, Field(min_length=1, max_length=256)]
UserPrompt = Annotated[SafeStr, Field(max_length=32 * 1024)]
Keyword = Annotated[SafeStr, Field(max_length=MAX_KEYWORD_CHARS)]
KeywordList = Annotated[list[Keyword], MaxItems(MAX_KEYWORDS), AfterValidator(_clean_keywords)]


class HistoryMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant", "system"]
    content: SafeStr


History = Annotated[list[HistoryMessage], MaxItems(MAX_HISTORY_ITEMS)]


class QueryRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "project_id": "default",
                    "query": "Who leads the platform team?",
                    "mode": "mix",
                    "top_k": 40,
                    "conversation_history": [
                        {"role": "user", "content": "Where is the platform team based?"},
                        {"role": "assistant", "content": "In Berlin."},
                    ],
                    "stream": False,
                }
            ]
        },
    )

    project_id: str = Field("default", pattern=PROJECT_ID_PATTERN)
    query: QueryText
    mode: QueryMode = "mix"
    top_k: PositiveCount = Field(40, description="Entities (local) / relations (global) retrieved.")
    chunk_top_k: PositiveCount = Field(20, description="Chunks retrieved by vector search and kept at the end.")
    max_entity_tokens: PositiveCount = 6000
    max_relation_tokens: PositiveCount = 8000
    max_total_tokens: PositiveCount = Field(30000, description="Upper bound of everything sent to the answer LLM.")
    chunk_selection: ChunkSelection | None = Field(
        None,
        description="How chunks are picked from entities/relations (LightRAG's picks per item); default: "
        "ranked by graph, vector and full-text evidence when QUERY_GRAPH_RANK is on, else KG_CHUNK_PICK_METHOD.",
    )
    enable_rerank: bool = True
    only_need_context: bool = False
    only_need_prompt: bool = False
    response_type: ResponseType = "Multiple Paragraphs"
    conversation_history: History = Field(default_factory=list)
    history_turns: HistoryTurns | None = None
    hl_keywords: KeywordList = Field(default_factory=list)
    ll_keywords: KeywordList = Field(default_factory=list)
    user_prompt: UserPrompt | None = None
    stream: bool = False


class Keywords(BaseModel):
    high_level: list[str] = Field(default_factory=list)
    low_level: list[str] = Field(default_factory=list)


_SHOWN_DESCRIPTION = (
    "As the answer prompt held it: the stored description, less the sentences one of its own chunks in `chunks` "
    "already holds word for word (empty when it holds them all), so the prompt does not say them twice."
)


class ContextEntity(BaseModel):
    name: str
    type: str
    description: str = Field(description=_SHOWN_DESCRIPTION)
    degree: int
    source_chunk_ids: list[str]
    file_paths: list[str]


class ContextRelation(BaseModel):
    source: str
    target: str
    keywords: str
    description: str = Field(description=_SHOWN_DESCRIPTION)
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


class Citation(BaseModel):
    chunk_id: str
    document_id: str
    file_path: str | None
    start: int = Field(description="Start of the supporting span, a character offset in the chunk's content.")
    end: int = Field(description="End of the supporting span (exclusive) in the chunk's content.")
    score: float = Field(description="How well the span matches the claim (0-1): word overlap and similarity.")


class Claim(BaseModel):
    text: str = Field(description="One sentence (or list item, or table row) of the answer: response[start:end].")
    start: int
    end: int
    support: Literal["supported", "partial", "unsupported"] = Field(
        description="From a check against the cited spans: `unsupported` when a number, date or name of the "
        "claim is in none of them, or little of its wording is."
    )
    citations: list[Citation]


class QueryResponse(BaseModel):
    response: str | None = Field(description="The answer; its citation markers name documents of `references` as [n].")
    mode: QueryMode
    keywords: Keywords
    context: QueryContext
    references: list[Reference]
    claims: list[Claim] = Field(
        default_factory=list,
        description="The answer's sentences with the context spans that support them (empty for context-only, "
        "prompt-only, bypass and nothing-found answers).",
    )
    prompt: str | None = None
