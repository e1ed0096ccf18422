"""The merge stage of ingestion: a document's extractions into the graph, in one transaction.

Every touched entity key is locked (services/graph/gate.py::locked_keys) before the rows are read, merged with
the pure rules of app/domain/merge_rules.py and written with their provenance; `graph_merged` is set in the
same transaction, so a crash leaves the document's contribution either complete or absent.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncConnection

from app.core.config import Settings
from app.db.engine import Database
from app.domain.document_rows import HeldClaim
from app.domain.merge_rules import EntityMerge, RelationMerge, endpoint_records, merge_entity, merge_relation
from app.domain.records import ChunkExtraction, EntityRecord, RelationRecord
from app.domain.rows import EntityRow, EntityText, Pair, RelationRow, RelationText
from app.repositories import documents as docs_repo
from app.repositories import graph as graph_repo
from app.repositories import merge_writes
from app.repositories.resolution_ledger import Recorded
from app.services.graph.gate import locked_keys
from app.services.ingest.last_writers import LastWriters
from app.services.ingest.lock_guess import LockGuesses
from app.services.ingest.name_resolution import NameResolution, Relock
from app.services.ingest.progress import DocumentCancelled
from app.services.ingest.resolution_judge import ResolutionJudge


class _AlreadyMerged(Exception):
    """The document's merge was committed before (a retaken claim): nothing to do."""


class ClaimLost(Exception):
    """Another worker took the document over (our heartbeat went stale) or it was deleted."""


async def require_claim(conn: AsyncConnection, project_id: str, document_id: str, worker_id: str) -> HeldClaim:
    claim = await docs_repo.lock_claim(conn, project_id, document_id, worker_id)
    if claim is None:
        raise ClaimLost(document_id)
    return claim


def _keys_of(extractions: list[ChunkExtraction]) -> set[str]:
    """Every entity key the records write: their entities' and both ends of their relations."""
    keys = {ent.key for extraction in extractions for ent in extraction.entities}
    for extraction in extractions:
        keys.update(k for rel in extraction.relations if rel.src_key != rel.tgt_key for k in (rel.src_key, rel.tgt_key))
    return keys


def item_idents(project_id: str, keys: Iterable[str], pairs: Iterable[Pair]) -> list[tuple]:
    """Process-wide names of entities and relations (summary claims, last writers)."""
    return [("e", project_id, k) for k in keys] + [("r", project_id, tuple(p)) for p in pairs]


@dataclass(eq=False)  # compared by identity: it also names its document as a writer in LastWriters
class Touched:
    """A document's entities (by key) and relations (by pair) as it last saw them: name(s), description,
    keywords and embedded_hash, enough to decide summaries and embeddings without reading them back.

    `prior` holds each item's description just before this document's merge ("" for a new one): the
    document whose merge took an item over the summary threshold is the one that summarises it (see
    finalise.py::summary_owner). None when unknown (a retry read back from the database)."""

    entities: dict[str, EntityText]
    relations: dict[Pair, RelationText]
    prior: dict[str | Pair, str] | None = None
    types: dict[str, str] = field(default_factory=dict)  # entity key → its type as written

    def replace(self, other: Touched) -> None:
        self.entities, self.relations, self.types = other.entities, other.relations, other.types

    @classmethod
    def of_rows(cls, entities: dict[str, EntityRow], relations: dict[Pair, RelationRow]) -> Touched:
        return cls(
            {k: EntityText.of(r) for k, r in entities.items()},
            {p: RelationText.of(r) for p, r in relations.items()},
            types={k: r.entity_type for k, r in entities.items()},
        )

    def nodes(self) -> dict[str, tuple[str, str]]:
        """Entity key → (name, type), as the document wrote its entities."""
        return {k: (e.name, self.types[k]) for k, e in self.entities.items() if k in self.types}


def _touched(
    entity_merges: list[EntityMerge],
    relation_merges: list[RelationMerge],
    existing: dict[str, EntityRow],
    existing_rel: dict[Pair, RelationRow],
) -> Touched:
    names = {m.key: m.name for m in entity_merges}
    ents = {
        m.key: EntityText(m.key, m.name, m.description, existing[m.key].embedded_hash if m.key in existing else None)
        for m in entity_merges
    }
    rels = {}
    for m in relation_merges:
        pair = (m.src_key, m.tgt_key)
        rels[pair] = RelationText(
            m.src_key,
            m.tgt_key,
            names.get(m.src_key, m.src_name),
            names.get(m.tgt_key, m.tgt_name),
            m.keywords,
            m.description,
            existing_rel[pair].embedded_hash if pair in existing_rel else None,
        )
    prior: dict[str | Pair, str] = {k: existing[k].description if k in existing else "" for k in ents}
    prior.update({p: existing_rel[p].description if p in existing_rel else "" for p in rels})
    return Touched(ents, rels, prior, {m.key: m.entity_type for m in entity_merges})


class GraphMerger:
    def __init__(self, db: Database, settings: Settings, last_writers: LastWriters, judge: ResolutionJudge) -> None:
        self.db = db
        self.settings = settings
        self.last_writers = last_writers
        self.judge = judge
        self.lock_guesses = LockGuesses()

    async def merge(
        self,
        project_id: str,
        document_id: str,
        worker_id: str,
        extractions: list[ChunkExtraction],
        chunk_texts: list[str] | None = None,
        owes_review: bool = False,
    ) -> Touched | None:
        """Merge the extractions into the graph in one transaction; the items as written (None if an
        earlier attempt had already merged). With ENTITY_RESOLUTION on, names first resolve to the entities
        they name (app/services/ingest/name_resolution.py), under the same locks; with ENTITY_RESOLUTION=llm the
        judge is asked about the pairs the rules leave open before the locks are taken. `chunk_texts`: the
        document's chunk texts in order, if the caller has them (resolution reads acronym definitions there).
        `owes_review`: the merge marks the document as owing its resolution review until its final write
        (services/ingest/review_sweep.py)."""
        resolution = None
        mode = self.settings.entity_resolution
        if mode != "off":
            # the rules alone: the locks guessed, nothing read before them (the judge reads what it asks about)
            guess = self.lock_guesses.of(project_id) if mode != "llm" and chunk_texts is not None else None
            if guess is None:
                async with self.db.connect() as conn:
                    resolution = await NameResolution.prepare(
                        conn, mode, project_id, document_id, extractions, chunk_texts
                    )
            else:
                resolution = await NameResolution.prepare(
                    None, mode, project_id, document_id, extractions, chunk_texts, guess
                )
            await self.judge.settle(project_id, resolution)
        while True:
            try:
                touched = await self._merge(project_id, document_id, worker_id, extractions, resolution, owes_review)
            except Relock:
                continue
            if touched is not None and resolution is not None and resolution.guess is not None:
                resolution.guess.learn(touched.entities)
            return touched

    async def _merge(
        self,
        project_id: str,
        document_id: str,
        worker_id: str,
        extractions: list[ChunkExtraction],
        resolution: NameResolution | None,
        owes_review: bool = False,
    ) -> Touched | None:
        async def claimed(conn: AsyncConnection) -> None:
            held(await docs_repo.lock_claim(conn, project_id, document_id, worker_id))

        def held(claim: HeldClaim | None) -> None:
            if claim is None:
                raise ClaimLost(document_id)
            if claim.graph_merged:
                raise _AlreadyMerged
            if claim.cancel_requested:  # ordered with POST /documents/{id}/cancel by the row lock
                raise DocumentCancelled(document_id)

        if resolution is not None and resolution.reads_ahead:  # decided before the locks, so they are held only
            async with self.db.connect() as conn:  # to check and write it
                await resolution.anticipate(conn)
        elif resolution is not None:  # on the reading it has (or, locks guessed, none: it decides under them)
            await resolution.anticipate(None)
        # the keys resolution may merge names into (it raises Relock for one outside them), else the records'
        keys = resolution.lock_keys if resolution is not None else _keys_of(extractions)
        try:
            # The claim's row is locked once the keys are held, not before: a merge waits its turn on hub
            # entities for seconds, and its document's row locked meanwhile held up the worker's heartbeat,
            # and behind it the progress and final writes of the worker's other documents. No writer waits
            # for key locks while holding the row of a processing document (deletion refuses those), so
            # taking the row last cannot close a cycle.
            async with locked_keys(self.db, project_id, keys, gate=False, step="merge") as conn:
                if resolution is None:
                    await claimed(conn)
                else:  # the claim is checked in the statement that reads what resolution decides on
                    claim, known = await resolution.read_locked(conn, worker_id)
                    held(claim)
                    resolution.decide_locked(known)
                    extractions = resolution.apply(extractions)
                    await resolution.suggest(conn)
                recorded = resolution.recorded() if resolution is not None else None  # written with the rows
                touched, idents = await self._merge_locked(
                    conn, project_id, document_id, extractions, recorded, owes_review
                )
        except _AlreadyMerged:
            return None
        self.last_writers.wrote(touched, idents)
        return touched

    async def _merge_locked(
        self,
        conn: AsyncConnection,
        project_id: str,
        document_id: str,
        extractions: list[ChunkExtraction],
        recorded: Recorded | None = None,
        owes_review: bool = False,
    ) -> tuple[Touched, list[tuple]]:
        """Fold the records into the rows under the key locks; the items as written and their process-wide
        names. `recorded`: resolution's aliases and ledger entries, written in the same statements;
        `owes_review`: marked with `graph_merged`."""
        entity_records: dict[str, list[EntityRecord]] = {}
        relation_records: dict[Pair, list[RelationRecord]] = {}
        endpoint_sources: dict[str, list[str]] = {}
        all_relations: list[RelationRecord] = []
        for extraction in extractions:  # chunk order
            for ent in extraction.entities:
                entity_records.setdefault(ent.key, []).append(ent)
            for rel in extraction.relations:
                if rel.src_key == rel.tgt_key:
                    continue
                relation_records.setdefault((rel.src_key, rel.tgt_key), []).append(rel)
                all_relations.append(rel)
                for key in (rel.src_key, rel.tgt_key):
                    endpoint_sources.setdefault(key, []).append(rel.chunk_id)
        keys = set(entity_records) | set(endpoint_sources)
        existing = await graph_repo.fetch_entities(conn, project_id, sorted(keys))
        existing_rel = await graph_repo.fetch_relations(conn, project_id, sorted(relation_records))
        missing = keys - set(existing) - set(entity_records)
        for key, records in endpoint_records(all_relations, missing).items():
            entity_records[key] = records

        entity_merges: list[EntityMerge] = []
        for key in sorted(keys):
            row = existing.get(key)
            entity_merges.append(
                merge_entity(
                    row,
                    entity_records.get(key, []),
                    row.sources if row else [],
                    self.settings,
                    extra_sources=endpoint_sources.get(key, ()),
                )
            )
        relation_merges: list[RelationMerge] = []
        for pair in sorted(relation_records):
            stored = existing_rel.get(pair)
            relation_merges.append(
                merge_relation(
                    stored,
                    relation_records[pair],
                    stored.sources if stored else [],
                    self.settings,
                )
            )

        written = [m for m in entity_merges if not m.skipped]
        new_pairs = [(m.src_key, m.tgt_key) for m in relation_merges if (m.src_key, m.tgt_key) not in existing_rel]
        await merge_writes.write_merge(
            conn,
            project_id,
            [m.row() for m in written],
            [m.row() for m in relation_merges if not m.skipped],
            merge_writes.degrees_added(new_pairs),
            recorded,
        )
        await graph_repo.add_entity_sources(
            conn, project_id, [(m.key, c, document_id) for m in entity_merges for c in m.new_sources]
        )
        await graph_repo.add_relation_sources(
            conn, project_id, [(m.src_key, m.tgt_key, c, document_id) for m in relation_merges for c in m.new_sources]
        )
        marks = {"review_owed": True} if owes_review else {}
        await docs_repo.set_fields(conn, project_id, document_id, graph_merged=True, **marks)
        touched = _touched(entity_merges, relation_merges, existing, existing_rel)
        idents = item_idents(
            project_id, [m.key for m in written], [(m.src_key, m.tgt_key) for m in relation_merges if not m.skipped]
        )
        return touched, idents
