"""The LLM judge's candidates beyond the rules (ENTITY_RESOLUTION=llm only): for each name of the document the
rules leave as a new node, the stored entities nearest to it by name-and-description embedding (one batched
embedding call, counted in the document's embedding usage), by trigram similarity where pg_trgm is installed,
by a bare code's letters ("LBN" / "Lebanon", either way round), and the document's other new names near it by
the same embeddings (a thing named two ways in one document), filtered and capped by
app/domain/judge_candidates.py, as pairs for the judge's one call; the pairs over the cap are returned apart, for
the judge to keep as duplicate suggestions.

Without an embedding endpoint, or when it fails, the judge gets the rules' open pairs only.
"""

from __future__ import annotations

import logging

from app.core.errors import ServiceUnavailable
from app.db.engine import Database
from app.domain.judge import JudgePair, one_line
from app.domain.judge_candidates import (
    CODE_MARGIN,
    PER_DOCUMENT,
    Neighbour,
    code_pattern,
    document_neighbours,
    lone_names,
    passing,
)
from app.domain.resolution import Resolution
from app.domain.texts import entity_embedding_text
from app.providers.embeddings import EmbeddingClient
from app.repositories import aliases as aliases_repo
from app.repositories import name_neighbours as repo
from app.repositories.retrieval import prepare_vector_search
from app.services.ingest.name_resolution import NameResolution

log = logging.getLogger(__name__)

# Neighbours read per name and source, before the type and guard checks: a bound on the work, wide enough that the
# floor, not the rank among what is stored, decides which pairs the judge is asked (domain/judge_candidates.py).
FETCHED = 16
SEARCH_EF = 40
TRIGRAM_FLOOR = 0.45  # pg_trgm similarity of keys ("fiorano reactor" / "fiorano-reactors": ~0.6)


class JudgeCandidates:
    def __init__(self, db: Database, embedder: EmbeddingClient | None, min_similarity: float) -> None:
        self.db = db
        self.embedder = embedder
        self.min_similarity = min_similarity

    async def pairs(
        self, project_id: str, resolution: NameResolution, rules: Resolution, stored: set[str]
    ) -> tuple[list[JudgePair], list[Neighbour]]:
        """Judge pairs for the document's new names and their nearest stored entities, at most PER_DOCUMENT (in
        the order of their keys), and the neighbours that passed but were over that cap. `rules`: what the rules
        alone decide (NameResolution.rules_only); `stored`: the names of it that are entities of the project."""
        lone = lone_names(rules, stored)
        if not lone:
            return [], []
        vectors = await self._embed(resolution, lone)  # before a connection is taken: no pooled one waits on it
        found: list[Neighbour] = []
        async with self.db.connect() as conn:
            if vectors:
                await prepare_vector_search(conn, SEARCH_EF)
                found += await repo.nearest_by_embedding(
                    conn, project_id, vectors, min_similarity=self.min_similarity - CODE_MARGIN, limit=FETCHED
                )
            found += await repo.nearest_by_trigrams(conn, project_id, lone, min_similarity=TRIGRAM_FLOOR, limit=FETCHED)
            codes = {k: p for k in lone if (p := code_pattern(resolution.doc.names[k])) is not None}
            words = [k for k in lone if k not in codes]
            found += await repo.fitting_codes(conn, project_id, codes, words, limit=FETCHED)
            found += document_neighbours(
                vectors, resolution.doc, resolution.descriptions, self.min_similarity - CODE_MARGIN
            )
            rejected = await aliases_repo.rejected_pairs(conn, project_id, [(n.name_key, n.key) for n in found])
        worth = passing(found, resolution.doc, rejected | resolution.rejected, self.min_similarity)
        chosen, over = worth[:PER_DOCUMENT], worth[PER_DOCUMENT:]
        doc = resolution.doc
        asked = [
            JudgePair(
                n.name_key,
                doc.names[n.name_key],
                doc.types.get(n.name_key, "unknown"),
                one_line(resolution.descriptions.get(n.name_key, "")),
                n.key,
                n.name,
                n.entity_type,
                one_line(n.description),
            )
            for n in chosen
        ]
        return asked, over

    async def _embed(self, resolution: NameResolution, keys: list[str]) -> list[tuple[str, list[float]]]:
        if self.embedder is None or not self.embedder.configured:
            return []
        texts = [entity_embedding_text(resolution.doc.names[k], resolution.descriptions.get(k, "")) for k in keys]
        try:
            vectors = await self.embedder.embed(texts)
        except ServiceUnavailable as exc:  # provider errors included
            log.warning("judge candidates of %s: embedding failed, rules' pairs only: %s", resolution.document_id, exc)
            return []
        return list(zip(keys, vectors, strict=True))
