"""Undo automatic merges: the names resolution merged into an entity become entities again, rebuilt from the
cached extraction records of the chunks that named them (app/domain/unmerge.py says which chunks go back),
with the deletion rebuild's merge rules, summaries and embeddings — no extraction call.

The alias goes, the ledger entries are marked undone (or rejected) and, unless asked otherwise, the pair is
recorded as distinct (entity_rejections), so resolution never merges it again. Everything happens under the
locks of the entity, the restored names and the far ends of the entity's relations (services/graph/gate.py),
so an ingestion touching any of them waits or goes first; it commits or rolls back as one unit.
"""

from __future__ import annotations

import logging

from sqlalchemy.ext.asyncio import AsyncConnection

from app.container import Container
from app.core.errors import Conflict, NotFound
from app.domain.rebuild import chunks_needed, plan_rebuild
from app.domain.rows import EntityRow, RelationRow
from app.domain.unmerge import Split, split_provenance
from app.repositories import aliases as alias_repo
from app.repositories import deletion as deletion_repo
from app.repositories import graph as graph_repo
from app.repositories import graph_curation as curation_repo
from app.repositories import merge_ledger as ledger_repo
from app.repositories import projects as projects_repo
from app.repositories.merge_ledger import LedgerEntry, Outcome
from app.schemas.deletion import LLMCalls
from app.schemas.merges import UnmergeReport, UnmergeRequest
from app.services.cached_llm import CacheBatch
from app.services.deletion.rebuild_inputs import RebuildInputs, read_inputs, store_parsed
from app.services.deletion.service import DeletionService, llm_call_counter
from app.services.graph.gate import CurationBase, entity_gate, locked_keys, project_exists
from app.services.graph.inputs import ordered_union
from app.services.graph.lookups import not_found
from app.services.ingest.resolved_records import resolved_extractions
from app.services.projects import EffectiveSettings, effective_settings, require_project

log = logging.getLogger(__name__)

Pair = tuple[str, str]
_BY_HAND = ("merge", "manual")


def merge_entry_not_found(entry_id: int) -> NotFound:
    return NotFound(f"No automatic merge entry {entry_id}", code="merge_entry_not_found")


class UnmergeService(CurationBase):
    def __init__(self, c: Container) -> None:
        super().__init__(c)
        self.rebuild = DeletionService(c)  # its summaries and embeddings of rebuilt rows

    async def unmerge(
        self, name: str, body: UnmergeRequest, *, outcome: Outcome = "undone", entry_alone: bool = False
    ) -> UnmergeReport:
        """`entry_alone`: undo `body.entry_id` only, not the other merges of its name, whose aliases scoped to
        their documents stay (an acronym's use undone while the documents defining it keep their meaning)."""
        with llm_call_counter() as calls:
            report = await self._unmerge(name, body, outcome, entry_alone)
            counted = calls()
        report.llm_calls = LLMCalls(
            extract=counted.get("extract", 0) + counted.get("glean", 0), summary=counted.get("summary", 0)
        )
        return report

    async def _unmerge(self, name: str, body: UnmergeRequest, outcome: Outcome, entry_alone: bool) -> UnmergeReport:
        pid = body.project_id
        async with self.db.connect() as conn:
            key, entries = await self._chosen(conn, pid, name, body, entry_alone)
        absorbed = sorted({e.merged_key for e in entries})
        neighbours: set[str] = set()
        async with entity_gate(self.db, pid, [key, *absorbed]):
            while True:
                async with self.db.connect() as conn:
                    neighbours |= set(await self._far_ends(conn, pid, key))
                locks = locked_keys(self.db, pid, [key, *absorbed, *neighbours], gate=False, first=project_exists(pid))
                batch: CacheBatch | None = None
                try:
                    async with locks as conn:
                        if not set(await self._far_ends(conn, pid, key)) <= neighbours:
                            continue  # a relation appeared meanwhile: lock its far end too
                        now_key, entries = await self._chosen(conn, pid, name, body, entry_alone)
                        if now_key != key or not {e.merged_key for e in entries} <= set(absorbed):
                            raise Conflict(f"'{name}' changed while being unmerged; try again", code="conflict")
                        batch = self.c.llm_cache.batch(pid, conn)
                        report, inputs = await self._apply(
                            conn, pid, key, entries, neighbours, body.keep_apart, batch, scoped=not entry_alone
                        )
                        await ledger_repo.set_outcome(conn, pid, [e.id for e in entries], outcome)
                finally:
                    if batch is not None:
                        await batch.flush_best_effort("unmerge")
                await store_parsed(self.db, pid, inputs)
                return report

    async def _chosen(
        self, conn: AsyncConnection, pid: str, name: str, body: UnmergeRequest, entry_alone: bool = False
    ) -> tuple[str, list[LedgerEntry]]:
        """The entity and the standing ledger entries to undo: 404 for an unknown entity or entry, 409 when
        no automatic merge matches (names merged by hand are said so)."""
        await require_project(conn, pid)
        asked = self._key(name)
        key = await self._resolve(conn, pid, name)
        entity = await curation_repo.get_entity(conn, pid, key)
        if entity is None:
            raise not_found(name)
        standing = await ledger_repo.standing_into(conn, pid, key)
        if body.entry_id is not None:
            entry = await ledger_repo.get_entry(conn, pid, body.entry_id)
            if entry is None or entry.entity_key != key:
                raise merge_entry_not_found(body.entry_id)
            if entry.outcome in ("undone", "rejected"):
                raise Conflict(f"Merge entry {entry.id} was {entry.outcome} already", code="merge_already_undone")
            wanted = {entry.merged_key}
        elif body.names is not None:
            wanted = {self._key(n) for n in body.names}
        elif asked != key:  # the path names an absorbed name: that merge alone
            wanted = {asked}
        else:
            wanted = {e.merged_key for e in standing}
        chosen = [e for e in standing if e.merged_key in wanted and (not entry_alone or e.id == body.entry_id)]
        missing = wanted - {e.merged_key for e in chosen}
        if missing or not chosen:
            raise Conflict(await self._why_not(conn, pid, key, entity.name, missing), code="no_automatic_merge")
        return key, chosen

    @staticmethod
    async def _why_not(conn: AsyncConnection, pid: str, key: str, name: str, missing: set[str]) -> str:
        aliases = {a.alias_key: a for a in (await alias_repo.aliases_of(conn, pid, [key])).get(key, [])}
        by_hand = sorted(aliases[k].alias_name for k in missing if k in aliases and aliases[k].source in _BY_HAND)
        if not missing:
            hand = sorted(a.alias_name for a in aliases.values() if a.source in _BY_HAND)
            note = f"; merged by hand: {', '.join(hand)[:500]} (detach the alias instead)" if hand else ""
            return f"Nothing was merged into '{name}' automatically{note}"
        if by_hand:
            return (
                f"{', '.join(by_hand)[:500]} merged into '{name}' by hand, not automatically: detach the alias instead"
            )
        return f"No standing automatic merge of {', '.join(sorted(missing))[:500]} into '{name}'"

    @staticmethod
    async def _far_ends(conn: AsyncConnection, pid: str, key: str) -> list[str]:
        return [k for pair in await deletion_repo.pairs_touching(conn, pid, [key]) for k in pair if k != key]

    async def _settings(self, conn: AsyncConnection, pid: str) -> EffectiveSettings:
        row = await projects_repo.get(conn, pid)
        return effective_settings(self.c.settings, row.settings if row else None)

    async def _records(self, conn: AsyncConnection, pid: str, chunks: list[str], s: EffectiveSettings) -> RebuildInputs:
        inputs = await read_inputs(conn, pid, chunks, s.entity_types, self.c.settings.entity_name_max_length)
        inputs.extractions = await resolved_extractions(conn, pid, inputs.extractions)
        return inputs

    async def _apply(
        self,
        conn: AsyncConnection,
        pid: str,
        key: str,
        entries: list[LedgerEntry],
        neighbours: set[str],
        keep_apart: bool,
        batch: CacheBatch,
        *,
        scoped: bool = True,
    ) -> tuple[UnmergeReport, RebuildInputs]:
        absorbed = sorted({e.merged_key for e in entries})
        entity = (await graph_repo.fetch_entities(conn, pid, [key]))[key]
        rels = await graph_repo.fetch_relations(conn, pid, await deletion_repo.pairs_touching(conn, pid, [key]))
        # without the aliases, the records name the absorbed names again
        await ledger_repo.detach_aliases(conn, pid, key, absorbed, scoped=scoped)
        if keep_apart:
            for k in absorbed:
                await alias_repo.reject(conn, pid, k, key)
        project = await self._settings(conn, pid)
        chunks = ordered_union(entity.sources, *[r.sources for r in rels.values()])
        inputs = await self._records(conn, pid, chunks, project)
        split = split_provenance(
            key, set(absorbed), entity.sources, {p: r.sources for p, r in rels.items()}, inputs.extractions
        )
        await deletion_repo.set_degrees_here(conn)  # recounted below, once per row
        names = {e.merged_key: e.merged_name for e in entries}
        restored, pairs = await self._move(conn, pid, entity, rels, split, names)
        # rebuilt as a deletion rebuilds what remains: from every chunk each item now has
        ents = await graph_repo.fetch_entities(conn, pid, [key, *restored])
        now = await graph_repo.fetch_relations(conn, pid, pairs)
        inputs = await self._records(conn, pid, chunks_needed(ents, now, set(), self.c.settings), project)
        plan = plan_rebuild(ents, now, set(), inputs.extractions, self.c.settings)
        ent_rows, rel_rows = await self.rebuild.summarised_rows(
            pid, plan, ents, now, inputs.paths, project.language, batch
        )
        vectors = await self.rebuild.embeddings(ents, now, ent_rows, rel_rows)
        await deletion_repo.delete_relations(conn, pid, plan.delete_relations)
        await curation_repo.delete_entities(conn, pid, plan.delete_entities)
        await deletion_repo.update_rebuilt_entities(conn, pid, ent_rows, vectors[0])
        await deletion_repo.update_rebuilt_relations(conn, pid, rel_rows, vectors[1])
        await deletion_repo.recount_degrees(conn, pid, {key, *restored, *neighbours})
        report = UnmergeReport(
            entity=entity.name,
            restored=[ents[k].name for k in restored if k in ents],
            entries=[e.id for e in entries],
            relations_restored=sum(1 for p in pairs if set(p) & set(restored)),
            llm_calls=LLMCalls(extract=0, summary=0),
        )
        return report, inputs

    @staticmethod
    async def _move(
        conn: AsyncConnection,
        pid: str,
        entity: EntityRow,
        rels: dict[Pair, RelationRow],
        split: Split,
        names: dict[str, str],
    ) -> tuple[list[str], list[Pair]]:
        """Move the provenance rows the split says to the restored names (new rows get their text from the
        rebuild); returns the restored keys and the relation pairs to rebuild."""
        restored = [k for k, chunks in split.restored.items() if chunks]
        key, sources = entity.key, entity.sources
        existing = await graph_repo.fetch_entities(conn, pid, restored, with_sources=False)
        await graph_repo.upsert_entities(
            conn,
            pid,
            [
                {
                    "key": k,
                    "name": split.names.get(k, names[k]),
                    "entity_type": split.types.get(k, entity.entity_type),
                    "description": "",
                    "source_ids": split.restored[k],
                    "file_paths": [],
                    "truncate": "",
                }
                for k in restored
                if k not in existing
            ],
        )
        all_chunks = ordered_union(sources, *split.new_relations.values())
        docs = await alias_repo.document_of_chunks(conn, pid, all_chunks)
        await graph_repo.add_entity_sources(
            conn, pid, [(k, c, docs[c]) for k in restored for c in split.restored[k] if c in docs]
        )
        kept = set(split.kept)
        await ledger_repo.drop_entity_sources(conn, pid, key, [c for c in sources if c not in kept])
        pairs: list[Pair] = []
        emptied: list[Pair] = []
        for pair, chunks in split.kept_relations.items():
            if not chunks:
                emptied.append(pair)
                continue
            await ledger_repo.drop_relation_sources(conn, pid, pair, [c for c in rels[pair].sources if c not in chunks])
            pairs.append(pair)
        await deletion_repo.delete_relations(conn, pid, emptied)
        alive = {key, *restored, *(k for p in split.kept_relations for k in p)}
        new = {p: chunks for p, chunks in split.new_relations.items() if set(p) <= alive}
        present = await graph_repo.fetch_relations(conn, pid, list(new), with_sources=False)
        await graph_repo.upsert_relations(
            conn,
            pid,
            [
                {"src_key": s, "tgt_key": t, "keywords": "", "description": "", "weight": 1.0}
                | {"source_ids": chunks, "file_paths": [], "truncate": ""}
                for (s, t), chunks in new.items()
                if (s, t) not in present
            ],
        )
        await graph_repo.add_relation_sources(
            conn, pid, [(s, t, c, docs[c]) for (s, t), chunks in new.items() for c in chunks if c in docs]
        )
        return restored, [*pairs, *new]
