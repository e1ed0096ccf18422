"""Long-lived collaborators, built once by app/wiring.py and handed to routes as a dependency.

Every service class takes the Container; the collaborators below are built from settings alone (or from
each other) and are shared by all services of the process."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from app.core.config import Settings
from app.db.engine import Database
from app.providers.embeddings import EmbeddingClient
from app.providers.llm import LLMClient
from app.providers.rerank_breaker import RerankService
from app.providers.tokenizer import Tokenizer
from app.repositories.common_words import CommonWords
from app.services.budget.fleet import FleetBudget
from app.services.cached_llm import CachedLLM
from app.services.pipeline_hub import PipelineHub


class LocalWorker(Protocol):
    """The queue worker running in this process, as the rest of the app sees it (app/worker/queue.py)."""

    id: str
    processed: int  # documents finished (processed or failed) since start

    @property
    def in_flight(self) -> list[tuple[str, str]]: ...

    def notify(self) -> None:
        """New work was enqueued: look for it now rather than at the next poll."""

    async def wait_for_change(self, seconds: float) -> None:
        """Return when a document handled by this worker finished, or after `seconds`."""

    def request_cancel(self, project_id: str, document_id: str) -> None:
        """Stop the document's processing at its next checkpoint, if this worker is processing it."""

    async def stop(self) -> None: ...


@dataclass
class Container:
    settings: Settings
    db: Database
    tokenizer: Tokenizer
    llm: LLMClient
    embedder: EmbeddingClient
    llm_cache: CachedLLM
    reranker: RerankService
    budget: FleetBudget  # the fleet's provider budget (no gates when no limit is set)
    common_words: CommonWords = field(default_factory=CommonWords)  # query words too common to search for
    pipeline_hub: PipelineHub = field(default_factory=PipelineHub)  # what GET /pipeline/events streams share
    owns_db: bool = True  # False when the caller passed the database in and closes it itself
    # Set when this process runs a queue worker (the API with WORKER_ENABLED, or `python -m app.worker`).
    worker: LocalWorker | None = None
