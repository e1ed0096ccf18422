"""Merge entities into one target, deterministically and in one transaction.

Differences from the official implementation, on purpose: every union keeps first-seen order (not set order),
descriptions follow the requested strategy, relations collapsing onto one pair add their weights, and the
whole merge — rows, provenance, embeddings — commits or rolls back as one unit.

Concurrency: merges touching the same entity queue at the in-process gate without a connection. The
merge is planned once without locks, to learn the far ends of the relations it moves and the texts the
LLM must write; those, and the vectors of the texts the merge will store, are made with no transaction
open (services/graph/vectors.py). The transaction then locks the entities and the far ends, plans again
from what it reads and writes, reusing the LLM texts and vectors whose inputs are unchanged; a vector
found missing rolls the transaction back to be made outside it. Should the texts keep changing (busy
ingestion), the last plan summarises under the locks, on the transaction's own connection: a transaction
holding locks never waits for a second pooled connection."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

from sqlalchemy.ext.asyncio import AsyncConnection

from app.container import Container
from app.core.config import Settings
from app.core.errors import InvalidInput, NotFound
from app.domain.aliases import AliasItem
from app.domain.names import entity_key, lookup_key, normalize_type, sanitize, sorted_pair
from app.domain.rows import ENTITY_FIELDS, EntityRow, RelationRow, RelationSource
from app.domain.texts import fragments, join_fragments
from app.repositories import aliases as alias_repo
from app.repositories import graph_curation as repo
from app.repositories import projects as projects_repo
from app.schemas.graph import MergeReport, MergeRequest, MergeStrategy, TargetEntityData
from app.services.graph.gate import entity_gate, locked_keys, project_exists
from app.services.graph.inputs import display_name, join_keywords, ordered_union
from app.services.graph.lookups import resolve_key
from app.services.graph.merge_texts import MergeTexts, first_known_type, limit_ids
from app.services.graph.summaries import Summarizer
from app.services.graph.vectors import OUTSIDE_TRIES, PreparedVectors, VectorsOutdated
from app.services.projects import effective_settings, require_project

log = logging.getLogger(__name__)

Pair = tuple[str, str]
_TRUNCATED = "...truncated"


# Plans made outside the locks, whose LLM texts were then outdated under them, before the texts are
# written under the locks instead (on the transaction's connection).
_LLM_OUTSIDE_TRIES = 3


@dataclass
class RelationPlan:
    delete_pairs: list[Pair] = field(default_factory=list)
    new_rows: list[dict] = field(default_factory=list)
    new_sources: list[RelationSource] = field(default_factory=list)
    neighbours: set[str] = field(default_factory=set)  # far ends of the relations touching the merged entities
    # every relation of the target after the merge: (source name, target name, keywords, description)
    texts: list[tuple[str, str, str, str]] = field(default_factory=list)
    redirected: int = 0
    merged: int = 0
    self_loops: int = 0


@dataclass
class _Request:
    project_id: str
    target_name: str
    tkey: str
    raw_by_key: dict[str, str]  # source key -> the name as requested
    involved: list[str]  # source keys in request order, then the target's
    body: MergeRequest
    by_hand: bool = True  # False for resolution's automatic merges


def given_by_hand(req: _Request, data: TargetEntityData | None) -> set[str]:
    """The fields a merge by hand was given (`target_entity_data`): written by hand."""
    if not req.by_hand or data is None:
        return set()
    return {f for f in ENTITY_FIELDS if getattr(data, f)}


@dataclass
class _Plan:
    found: dict[str, EntityRow]
    values: dict
    relations: RelationPlan


class EntityMergeService:
    def __init__(self, c: Container) -> None:
        self.c = c
        self.settings: Settings = c.settings
        # llm_summarize asked for an LLM-written text, so summarise from two fragments on
        forced = c.settings.model_copy(update={"force_llm_summary_on_merge": 2})
        self.summarizer = Summarizer(c.llm_cache, c.tokenizer, forced)

    async def merge(self, body: MergeRequest, *, by_hand: bool = True) -> MergeReport:
        """A merge writes texts combined from extracted ones: a deletion rebuilds them from the remaining
        chunks, through the aliases the merge records, so nothing of a deleted document stays in them. What a
        person gave in `target_entity_data` of a merge `by_hand` is written by hand (kept by deletion rebuilds),
        as is what was so in the merged rows."""
        req = await self._resolved(replace(self._request(body), by_hand=by_hand))
        async with entity_gate(self.c.db, req.project_id, req.involved):
            texts = MergeTexts(self.summarizer, req.project_id)
            try:
                return await self._merge(req, texts, PreparedVectors(self.c.embedder))
            finally:
                await texts.flush()

    def _request(self, body: MergeRequest) -> _Request:
        max_length = self.settings.entity_name_max_length
        target_name = display_name(body.target_entity, max_length)
        tkey = entity_key(target_name)
        raw_by_key: dict[str, str] = {}
        for raw in body.source_entities:
            key = lookup_key(sanitize(raw), max_length)
            if not key:
                raise InvalidInput(f"'{raw}' is not a usable entity name", code="invalid_entity_name")
            raw_by_key.setdefault(key, raw)
        return _Request(body.project_id, target_name, tkey, raw_by_key, ordered_union(list(raw_by_key), [tkey]), body)

    async def _resolved(self, req: _Request) -> _Request:
        """Names given as aliases stand for the entities they name; a target that is an alias of an entity
        outside the sources is that entity (the merge goes into it and keeps its name)."""
        async with self.c.db.connect() as conn:
            await require_project(conn, req.project_id)
            raw_by_key: dict[str, str] = {}
            for key, raw in req.raw_by_key.items():
                raw_by_key.setdefault(await resolve_key(conn, req.project_id, key), raw)
            target_name, tkey = req.target_name, await resolve_key(conn, req.project_id, req.tkey)
            if tkey != req.tkey and tkey not in raw_by_key:
                named = await repo.get_entity(conn, req.project_id, tkey)
                target_name = named.name if named else target_name
            else:
                tkey = req.tkey
        return replace(
            req,
            raw_by_key=raw_by_key,
            target_name=target_name,
            tkey=tkey,
            involved=ordered_union(list(raw_by_key), [tkey]),
        )

    async def _merge(self, req: _Request, texts: MergeTexts, vectors: PreparedVectors) -> MergeReport:
        plan = await self._unlocked_plan(req, texts)  # far ends, texts for the LLM
        neighbours = plan.relations.neighbours
        if texts.wanted:  # once the LLM wrote them, the texts to embed are known
            await texts.write()
            plan = await self._unlocked_plan(req, texts)
        vectors.want_entity(req.target_name, plan.values["description"])
        for names_and_texts in plan.relations.texts:
            vectors.want_relation(*names_and_texts)
        outdated = vectors_outdated = 0
        while True:
            await texts.write()
            await vectors.make()
            # relations moved by the merge change their far ends too: without their locks, a concurrent merge
            # of a far end would re-point a relation at an entity this merge deletes
            locks = locked_keys(
                self.c.db,
                req.project_id,
                [*req.involved, *neighbours],
                gate=False,
                first=project_exists(req.project_id),
            )
            try:
                async with locks as conn:
                    report = await self._locked_merge(
                        conn,
                        req,
                        texts,
                        vectors,
                        neighbours,
                        summarise_here=outdated >= _LLM_OUTSIDE_TRIES,
                        embed_here=vectors_outdated >= OUTSIDE_TRIES,
                    )
            except VectorsOutdated:  # rolled back; the missing vectors are made outside the transaction
                vectors_outdated += 1
                continue
            if report is not None:
                return report
            if texts.wanted:
                outdated += 1

    async def _unlocked_plan(self, req: _Request, texts: MergeTexts) -> _Plan:
        async with self.c.db.connect() as conn:
            await require_project(conn, req.project_id)
            return await self._plan(conn, req, texts)

    async def _locked_merge(
        self,
        conn: AsyncConnection,
        req: _Request,
        texts: MergeTexts,
        vectors: PreparedVectors,
        neighbours: set[str],
        *,
        summarise_here: bool,
        embed_here: bool,
    ) -> MergeReport | None:
        """Under the locks of the merged entities and of the far ends of their relations, plan and write.
        None (nothing written) when a far end was not locked (`neighbours` grows) or an LLM text is missing
        and not `summarise_here`."""
        plan = await self._plan(conn, req, texts)
        if not plan.relations.neighbours <= neighbours:
            neighbours |= plan.relations.neighbours
            return None
        if texts.wanted and summarise_here:
            log.info(
                "merge into %s/%s: its entities keep changing; summarising under the locks", req.project_id, req.tkey
            )
            await texts.write(conn)
            plan = await self._plan(conn, req, texts)
        if texts.wanted:
            return None
        return await self._write(conn, req, plan, vectors, embed_here=embed_here)

    async def _plan(self, conn: AsyncConnection, req: _Request, texts: MergeTexts) -> _Plan:
        s = self.settings
        found = await repo.get_entities(conn, req.project_id, req.involved)
        missing = [raw for key, raw in req.raw_by_key.items() if key not in found]
        if missing:
            raise NotFound(f"Entities not found: {', '.join(repr(m) for m in missing)}", code="entity_not_found")
        language = await self._language(conn, req.project_id)
        rows = [found[k] for k in req.involved if k in found]  # sources in request order, then the target
        data, strategy = req.body.target_entity_data, req.body.strategy
        given = sanitize(data.description) if data and data.description else None
        description = given or self._combine(
            texts, strategy, "entity", req.target_name, [r.description for r in rows], language
        )
        entity_type = (
            normalize_type(data.entity_type)
            if data and data.entity_type
            else first_known_type([r.entity_type for r in rows])
        )
        values = {
            "name": req.target_name,
            "entity_type": entity_type,
            "description": description,
            "hand_fields": sorted(given_by_hand(req, data) | {f for r in rows for f in r.hand_fields}),
            "source_ids": limit_ids(
                ordered_union(*[r.source_ids for r in rows]), s.max_source_ids_per_entity, s.source_ids_limit_method
            ),
            "file_paths": self._paths(*[r.file_paths for r in rows]),
        }
        relations = await self._plan_relations(
            conn,
            req.project_id,
            req.involved,
            req.tkey,
            req.target_name,
            strategy,
            language,
            texts,
        )
        return _Plan(found, values, relations)

    async def _write(
        self, conn: AsyncConnection, req: _Request, plan: _Plan, vectors: PreparedVectors, *, embed_here: bool
    ) -> MergeReport:
        project_id, tkey, rel = req.project_id, req.tkey, plan.relations
        merged_keys = [k for k in req.raw_by_key if k != tkey]
        if tkey in plan.found:
            await repo.update_entity(conn, project_id, tkey, plan.values)
        else:
            await repo.insert_entity(conn, project_id, {"key": tkey, **plan.values})
        await repo.copy_entity_sources(conn, project_id, merged_keys, tkey)
        await repo.delete_relations(conn, project_id, rel.delete_pairs)
        await repo.delete_entities(conn, project_id, merged_keys)
        # the merged names, and every alias they had, now name the target
        await alias_repo.repoint(conn, project_id, merged_keys, tkey)
        await alias_repo.add_aliases(
            conn, project_id, tkey, [AliasItem(k, plan.found[k].name, "merge") for k in merged_keys], overwrite=True
        )
        await repo.insert_relations(conn, project_id, rel.new_rows)
        await repo.insert_relation_sources(conn, project_id, rel.new_sources)
        await vectors.write(conn, project_id, entity_keys=[tkey], touching=[tkey], embed_here=embed_here)
        return MergeReport(
            target=req.target_name,
            merged_sources=[plan.found[k].name for k in merged_keys],
            relations_redirected=rel.redirected,
            relations_merged=rel.merged,
            self_loops_dropped=rel.self_loops,
        )

    async def _plan_relations(
        self,
        conn: AsyncConnection,
        project_id: str,
        involved: list[str],
        tkey: str,
        target_name: str,
        strategy: MergeStrategy,
        language: str,
        texts: MergeTexts,
    ) -> RelationPlan:
        """Point every relation of the involved entities at the target; drop self-loops; merge collisions."""
        s = self.settings
        plan = RelationPlan()
        rank = {k: i for i, k in enumerate(involved)}
        far = len(involved)
        rels = sorted(
            await repo.relations_touching(conn, project_id, involved),
            key=lambda r: (min(rank.get(r.src_key, far), rank.get(r.tgt_key, far)), r.src_key, r.tgt_key),
        )
        groups: dict[Pair, list[RelationRow]] = {}
        names: dict[str, str] = {tkey: target_name}
        for rel in rels:
            plan.neighbours.update(k for k in rel.pair if k not in rank)
            src = tkey if rel.src_key in rank else rel.src_key
            tgt = tkey if rel.tgt_key in rank else rel.tgt_key
            names.setdefault(rel.src_key, rel.src_name)
            names.setdefault(rel.tgt_key, rel.tgt_name)
            if src == tgt:
                plan.self_loops += 1
                plan.delete_pairs.append(rel.pair)
                continue
            pair = sorted_pair(src, tgt)
            if pair != rel.pair:
                plan.redirected += 1
            groups.setdefault(pair, []).append(rel)

        changed = {p: m for p, m in groups.items() if len(m) > 1 or m[0].pair != p}
        provenance: dict[Pair, list[RelationSource]] = {}
        for row in await repo.relation_sources_of(
            conn, project_id, [m.pair for members in changed.values() for m in members]
        ):
            provenance.setdefault((row.src_key, row.tgt_key), []).append(row)

        for pair, members in groups.items():
            if pair not in changed:
                [member] = members
                plan.texts.append((names[pair[0]], names[pair[1]], member.keywords, member.description))
        for pair, members in changed.items():
            old_pairs = [m.pair for m in members]
            plan.delete_pairs.extend(old_pairs)
            plan.merged += len(members) - 1
            label = f"{names[pair[0]]} - {names[pair[1]]}"
            description = self._combine(texts, strategy, "relation", label, [m.description for m in members], language)
            keywords = join_keywords(*[m.keywords for m in members])
            plan.texts.append((names[pair[0]], names[pair[1]], keywords, description))
            plan.new_rows.append(
                {
                    "src_key": pair[0],
                    "tgt_key": pair[1],
                    "description": description,
                    "keywords": keywords,
                    "weight": sum(float(m.weight) for m in members),
                    "hand_fields": sorted({f for m in members for f in m.hand_fields}),
                    "source_ids": limit_ids(
                        ordered_union(*[m.source_ids for m in members]),
                        s.max_source_ids_per_relation,
                        s.source_ids_limit_method,
                    ),
                    "file_paths": self._paths(*[m.file_paths for m in members]),
                }
            )
            seen: dict[str, RelationSource] = {}
            for row in sorted((r for p in old_pairs for r in provenance.get(p, [])), key=lambda r: r.seq):
                seen.setdefault(row.chunk_id, replace(row, src_key=pair[0], tgt_key=pair[1]))
            plan.new_sources.extend(seen.values())
        return plan

    def _paths(self, *lists: list[str] | None) -> list[str]:
        paths = [p for p in ordered_union(*lists) if not p.startswith(_TRUNCATED)]
        return limit_ids(paths, self.settings.max_file_paths, self.settings.source_ids_limit_method)

    async def _language(self, conn: AsyncConnection, project_id: str) -> str:
        row = await projects_repo.get(conn, project_id)
        return effective_settings(self.settings, row.settings if row else None).language

    def _combine(
        self, texts: MergeTexts, strategy: MergeStrategy, kind: str, name: str, descriptions: list[str], language: str
    ) -> str:
        clean = [d.strip() for d in descriptions if d and d.strip()]
        if not clean:
            return ""
        if strategy == "keep_first":
            return clean[0]
        if strategy == "keep_longest":
            return max(clean, key=len)  # the first of equally long ones
        parts = ordered_union(*[[f.strip() for f in fragments(t)] for t in clean])
        if strategy == "concatenate" or len(parts) <= 1:
            return join_fragments(parts)
        return texts.get(kind, name, parts, language)
