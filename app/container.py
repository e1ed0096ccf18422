"""Long-lived collaborators, built once in the app's lifespan and handed to routes as a dependency."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.config import Settings
from app.db.engine import Database
from app.providers.embeddings import EmbeddingClient
from app.providers.llm import LLMClient
from app.providers.tokenizer import Tokenizer


@dataclass
class Container:
    settings: Settings
    db: Database
    tokenizer: Tokenizer
    llm: LLMClient
    embedder: EmbeddingClient
    # Feature services register themselves here (e.g. "reranker", "worker") during start-up.
    extras: dict[str, Any] = field(default_factory=dict)
