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

The same question gets the same answer whichever name came first: each pair is shown the smaller key first and
the pairs in key order (app/domain/judge.py::JudgePair.facing), and each verdict is kept in the response cache
under the unordered pair of keys and types (`pair_key`): a pair settled once, from either side, is answered
from there and not asked again (nor paid for).

The candidates beyond the rules are capped per document (PER_DOCUMENT, a token ceiling); those over it are not
lost: they become duplicate suggestions, written with the merge's (evidence "not asked: over the judge's
per-document cap of 32 ..."), for a user to review, and the document's report counts them
(`judge_pairs_unasked`).
"""

from __future__ import annotations

import logging

from app.core.config import Settings
from app.core.errors import ServiceUnavailable
from app.db.engine import Database
from app.domain.aliases import SuggestionItem
from app.domain.judge import JudgePair, Verdict, parse_verdicts, read_verdict, verdict_text
from app.domain.judge_candidates import Proposal, unasked_evidence
from app.prompts.judge import JUDGE_SCHEMA, JUDGE_SCHEMA_NAME, judge_messages
from app.providers.embeddings import EmbeddingClient
from app.providers.llm import json_schema_format
from app.repositories import documents as docs_repo
from app.repositories import llm_cache as cache_repo
from app.services.cached_llm import CachedLLM, ChatRequest, cache_key, llm_identity
from app.services.ingest.judge_candidates import JudgeCandidates
from app.services.ingest.name_resolution import NameResolution

log = logging.getLogger(__name__)

JUDGE_OPERATION = "judge"
PAIR_VERDICT = "entity_judge_pair"  # the response cache's type of one pair's verdict
_FORMAT = json_schema_format(JUDGE_SCHEMA_NAME, JUDGE_SCHEMA)


def same_targets(pairs: list[JudgePair], answer: str) -> dict[str, tuple[str, str]]:
    """Name key → (entity key, reason) for each name the answer joins to exactly one of its candidates."""
    return joined(pairs, parse_verdicts(answer, len(pairs)))


def joined(pairs: list[JudgePair], verdicts: dict[int, Verdict]) -> dict[str, tuple[str, str]]:
    """`same_targets` of verdicts by pair number (1-based)."""
    same: dict[str, list[tuple[str, str]]] = {}
    for number, verdict in verdicts.items():
        if verdict.same:
            pair = pairs[number - 1]
            same.setdefault(pair.key, []).append((pair.other, verdict.reason or "the judge found them the same"))
    return {key: found[0] for key, found in same.items() if len(found) == 1}


def pair_key(identity: str, pair: JudgePair) -> str:
    """The cache key of a pair's verdict: the model, and the two sides' keys and types in key order."""
    sides = sorted((f"{pair.key}\x1f{pair.entity_type.casefold()}", f"{pair.other}\x1f{pair.other_type.casefold()}"))
    return cache_key(PAIR_VERDICT, identity, *sides)


class ResolutionJudge:
    def __init__(
        self, db: Database, cache: CachedLLM, settings: Settings, embedder: EmbeddingClient | None = None
    ) -> None:
        self.db = db
        self.cache = cache
        self.settings = settings
        self.candidates = JudgeCandidates(db, embedder, settings.entity_judge_similarity)

    async def settle(self, project_id: str, resolution: NameResolution, report_of: str | None = None) -> None:
        """Ask about the resolution's open pairs once (mode llm only) and keep the verdicts on it; the candidates
        over the cap are kept on it as suggestions and counted on the report of `report_of` (an update's row),
        else of the resolution's document."""
        if resolution.mode != "llm" or resolution.settled:
            return
        resolution.settled = True
        async with self.db.connect() as conn:
            known, result = await resolution.rules_only(conn)
            pairs = await resolution.open_pairs(conn, result)
        proposed, over = await self.candidates.pairs(project_id, resolution, result, set(known.entity_types))
        if over:
            resolution.unasked = [SuggestionItem(n.name_key, n.key, n.similarity, unasked_evidence(n)) for n in over]
            log.info("entity judge: %d pairs of %s over the per-document cap", len(over), resolution.document_id)
            async with self.db.transaction() as conn:
                await docs_repo.set_judge_unasked(conn, project_id, report_of or resolution.document_id, len(over))
        pairs += proposed
        if not pairs:
            return
        verdicts = await self._verdicts(project_id, resolution.document_id, pairs)
        same = joined(pairs, verdicts)
        resolution.judged = same
        shown = {(p.key, p.other): p for p in proposed}
        resolution.proposed = {
            key: Proposal(target, shown[key, target].other_name, shown[key, target].other_type, reason)
            for key, (target, reason) in same.items()
            if (key, target) in shown
        }

    async def _verdicts(self, project_id: str, document_id: str, pairs: list[JudgePair]) -> dict[int, Verdict]:
        """Pair number (1-based) → verdict: kept ones from the cache, the others asked in one call, each shown
        the same way round whichever side is the document's, then kept."""
        llm, use_cache = self.cache.llm, self.settings.enable_llm_cache
        keys = [pair_key(llm_identity(llm), p) for p in pairs]
        kept: dict[str, Verdict] = {}
        if use_cache:
            async with self.db.connect(seen_by_client=False) as conn:
                rows = await cache_repo.get_many(conn, project_id, keys)
            kept = {k: v for k, row in rows.items() if (v := read_verdict(row["response"])) is not None}
        verdicts = {n: kept[k] for n, k in enumerate(keys, 1) if k in kept}
        asked = sorted({k: p.facing() for k, p in zip(keys, pairs, strict=True) if k not in kept}.items())
        if not asked:
            return verdicts
        structured = self.settings.extraction_format == "json" and llm.structured_outputs is not False
        request = ChatRequest(
            "entity_judge",
            judge_messages([p for _, p in asked]),
            JUDGE_OPERATION,
            json_mode=True,
            use_cache=use_cache,
            response_format=_FORMAT if structured else None,
        )
        try:
            answer = await self.cache.chat(project_id, request)
        except ServiceUnavailable as exc:
            log.warning("entity judge unavailable for %s, resolving by the rules: %s", document_id, exc)
            return verdicts
        fresh = {asked[n - 1][0]: v for n, v in parse_verdicts(answer.text, len(asked)).items()}
        verdicts |= {n: fresh[k] for n, k in enumerate(keys, 1) if k in fresh}
        if use_cache and fresh:
            rows_out = [
                {
                    "key": k,
                    "cache_type": PAIR_VERDICT,
                    "model": llm.model,
                    "response": verdict_text(v),
                    "prompt_tokens": 0,
                    "completion_tokens": 0,
                }
                for k, v in fresh.items()
            ]
            async with self.db.transaction(seen_by_client=False) as conn:
                await cache_repo.put_many(conn, project_id, rows_out)
        return verdicts
