"""Review of possible duplicate entities: list suggested pairs with their evidence, reject a pair.

Two sources of pairs: the suggestions entity resolution stored at ingest time without applying them, and
same-type entities whose embeddings (name and description) are close, computed on demand from the entity
vector index for the PROBES most recently changed entities (bounded work per request: probing all of
5,000 entities took 2-3 s on a loaded 2-core test machine). Rejected pairs and pairs whose entities are
gone are never listed. Accepting a pair: services/merges/suggestions.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from difflib import SequenceMatcher

from sqlalchemy.ext.asyncio import AsyncConnection

from app.core.errors import InvalidInput
from app.domain.rows import EntityRow
from app.repositories import aliases as alias_repo
from app.repositories import entity_duplicates as duplicates_repo
from app.repositories import graph_curation as repo
from app.repositories.retrieval import prepare_vector_search
from app.schemas.duplicates import DuplicateList, DuplicatePair, DuplicateReject, DuplicateRejected
from app.services.graph.gate import CurationBase, locked_keys
from app.services.graph.lookups import not_found
from app.services.projects import require_project

Pair = tuple[str, str]

NEIGHBOURS = 5  # nearest same-type entities examined per probed entity
PROBES = 1000  # most recently changed entities probed per request (~1 ms of index search each)
SEARCH_EF = 40  # HNSW candidate list: a few neighbours are wanted, not a query's top_k
CANDIDATE_CAP = 2000  # pairs gathered per request, before paging
SHOWN_NEIGHBOURS = 10


def name_similarity(a: str, b: str) -> float:
    return round(SequenceMatcher(None, a.casefold(), b.casefold(), autojunk=False).ratio(), 3)


@dataclass
class _Candidate:
    score: float
    found_by: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)


class DuplicateService(CurationBase):
    async def list_pairs(self, project_id: str, limit: int, offset: int, threshold: float | None) -> DuplicateList:
        floor = self.c.settings.entity_similarity_threshold if threshold is None else threshold
        async with self.db.read() as conn:
            await require_project(conn, project_id)
            found: dict[Pair, _Candidate] = {}
            for s in await alias_repo.list_suggestions(conn, project_id, limit=CANDIDATE_CAP):
                found[(s.key_a, s.key_b)] = _Candidate(s.score, ["resolution"], [s.evidence] if s.evidence else [])
            await prepare_vector_search(conn, SEARCH_EF)
            for a, b, score in await duplicates_repo.similar_pairs(
                conn, project_id, min_similarity=floor, neighbours=NEIGHBOURS, probes=PROBES, cap=CANDIDATE_CAP
            ):
                item = found.setdefault((a, b), _Candidate(score))
                item.score = max(item.score, score)
                item.found_by.append("similarity")
                item.evidence.append(f"embeddings of name and description {score:.2f} similar (same type)")
            for pair in await alias_repo.rejected_pairs(conn, project_id, list(found)):
                found.pop(pair, None)
            ranked = sorted(found.items(), key=lambda kv: (-kv[1].score, kv[0]))
            page = ranked[offset : offset + limit]
            keys = {k for pair, _ in page for k in pair}
            rows = await repo.get_entities(conn, project_id, list(keys))
            shared = await duplicates_repo.shared_neighbours(conn, project_id, [p for p, _ in page])
        pairs = [
            self._pair_out(rows[a], rows[b], item, shared.get((a, b), []))
            for (a, b), item in page
            if a in rows and b in rows
        ]
        return DuplicateList(pairs=pairs, total=len(ranked), limit=limit, offset=offset, threshold=floor)

    @staticmethod
    def _pair_out(a: EntityRow, b: EntityRow, item: _Candidate, shared: list[str]) -> DuplicatePair:
        names = name_similarity(a.name, b.name)
        evidence = [*item.evidence, f"names {names:.0%} alike"]
        if a.entity_type != b.entity_type:
            evidence.append(f"different types: {a.entity_type} / {b.entity_type}")
        if shared:
            evidence.append(
                f"{len(shared)} shared neighbour{'s' if len(shared) > 1 else ''}: "
                + ", ".join(shared[:SHOWN_NEIGHBOURS])
            )
        return DuplicatePair(
            entity_a=a.name,
            entity_b=b.name,
            entity_type_a=a.entity_type,
            entity_type_b=b.entity_type,
            score=round(item.score, 4),
            found_by=sorted(set(item.found_by)),
            name_similarity=names,
            shared_neighbours=shared[:SHOWN_NEIGHBOURS],
            evidence=evidence,
        )

    async def reject(self, body: DuplicateReject) -> DuplicateRejected:
        """Remember that the two entities are distinct: the pair is never suggested again."""
        project_id = body.project_id
        async with self.db.connect() as conn:
            a, b = await self.two_keys(conn, project_id, body.entity_a, body.entity_b)
        async with locked_keys(self.db, project_id, [a, b]) as conn:
            found = await both_entities(conn, project_id, {a: body.entity_a, b: body.entity_b})
            await alias_repo.reject(conn, project_id, a, b)
        return DuplicateRejected(entity_a=found[a].name, entity_b=found[b].name)

    async def two_keys(self, conn: AsyncConnection, project_id: str, name_a: str, name_b: str) -> Pair:
        """The keys of the entities two names name (directly or as aliases); 404 for an unknown project, 422
        when both name one entity."""
        await require_project(conn, project_id)
        a = await self._resolve(conn, project_id, name_a)
        b = await self._resolve(conn, project_id, name_b)
        if a == b:
            raise InvalidInput("Name two different entities", code="same_entity")
        return a, b


async def both_entities(conn: AsyncConnection, project_id: str, named: dict[str, str]) -> dict[str, EntityRow]:
    """The entities of `named` (key → the name asked by); 404 naming the first one missing."""
    found = await repo.get_entities(conn, project_id, list(named))
    for key, raw in named.items():
        if key not in found:
            raise not_found(raw)
    return found
