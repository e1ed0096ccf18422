"""The LLM judge of entity resolution (ENTITY_RESOLUTION=llm): one call per document for the pairs of names the
rules leave open (app/domain/judge.py), asked before the merge takes its locks so no LLM call runs under them.

The call goes through the project's response cache like an extraction (a retried or re-ingested document asks
nothing again) and through the document's usage, so it shows in the report's `llm_calls` and the token
headers. A name joins an entity only when the judge says "same" for exactly that one of its candidates; the
resolver applies it under the locks if the name is still open and the confusable guard lets the pair through.
If the call fails, the document resolves by the rules alone: the judge is an addition, never a requirement.

Besides the rules' open pairs, the call carries the new names' nearest stored entities
(services/ingest/judge_candidates.py), the aliases no rule on names can see ("Burma" / "Myanmar"); a "same" on
one of those is kept on the resolution as a proposal (app/domain/judge_candidates.py::with_proposals).
"""

from __future__ import annotations

import logging

from app.core.config import Settings
from app.core.errors import ServiceUnavailable
from app.db.engine import Database
from app.domain.judge import JudgePair, parse_verdicts
from app.domain.judge_candidates import Proposal
from app.prompts.judge import JUDGE_SCHEMA, JUDGE_SCHEMA_NAME, judge_messages
from app.providers.embeddings import EmbeddingClient
from app.providers.llm import json_schema_format
from app.services.cached_llm import CachedLLM, ChatRequest
from app.services.ingest.judge_candidates import JudgeCandidates
from app.services.ingest.name_resolution import NameResolution

log = logging.getLogger(__name__)

JUDGE_OPERATION = "judge"
_FORMAT = json_schema_format(JUDGE_SCHEMA_NAME, JUDGE_SCHEMA)


def same_targets(pairs: list[JudgePair], answer: str) -> dict[str, tuple[str, str]]:
    """Name key → (entity key, reason) for each name the answer joins to exactly one of its candidates."""
    same: dict[str, list[tuple[str, str]]] = {}
    for number, verdict in parse_verdicts(answer, len(pairs)).items():
        if verdict.same:
            pair = pairs[number - 1]
            same.setdefault(pair.key, []).append((pair.other, verdict.reason or "the judge found them the same"))
    return {key: found[0] for key, found in same.items() if len(found) == 1}


class ResolutionJudge:
    def __init__(
        self, db: Database, cache: CachedLLM, settings: Settings, embedder: EmbeddingClient | None = None
    ) -> None:
        self.db = db
        self.cache = cache
        self.settings = settings
        self.candidates = JudgeCandidates(db, embedder, settings.entity_judge_similarity)

    async def settle(self, project_id: str, resolution: NameResolution) -> None:
        """Ask about the resolution's open pairs once (mode llm only) and keep the verdicts on it."""
        if resolution.mode != "llm" or resolution.settled:
            return
        resolution.settled = True
        async with self.db.connect() as conn:
            known, result = await resolution.rules_only(conn)
            pairs = await resolution.open_pairs(conn, result)
        proposed = await self.candidates.pairs(project_id, resolution, result, set(known.entity_types))
        pairs += proposed
        if not pairs:
            return
        llm = self.cache.llm
        structured = self.settings.extraction_format == "json" and llm.structured_outputs is not False
        request = ChatRequest(
            "entity_judge",
            judge_messages(pairs),
            JUDGE_OPERATION,
            json_mode=True,
            use_cache=self.settings.enable_llm_cache,
            response_format=_FORMAT if structured else None,
        )
        try:
            answer = await self.cache.chat(project_id, request)
        except ServiceUnavailable as exc:
            log.warning("entity judge unavailable for %s, resolving by the rules: %s", resolution.document_id, exc)
            return
        same = same_targets(pairs, answer.text)
        resolution.judged = same
        shown = {(p.key, p.other): p for p in proposed}
        resolution.proposed = {
            key: Proposal(target, shown[key, target].other_name, shown[key, target].other_type, reason)
            for key, (target, reason) in same.items()
            if (key, target) in shown
        }
