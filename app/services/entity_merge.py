"""Merge entities into one target (reference §11 merge_entities), deterministically and in one transaction.

Differences from the official implementation, on purpose: every union keeps first-seen order (weakness 5),
descriptions follow the requested strategy, relations collapsing onto one pair add their weights, and the
whole merge — rows, provenance, embeddings — commits or rolls back as one unit."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncConnection

from app.config import Settings
from app.container import Container
from app.domain.names import entity_key, lookup_key, normalize_type, sanitize, sorted_pair
from app.domain.texts import fragments, join_fragments
from app.errors import InvalidInput, NotFound
from app.repositories import curation as repo
from app.repositories import graph as graph_repo
from app.repositories import projects as projects_repo
from app.schemas.entities import MergeReport, MergeRequest, MergeStrategy
from app.services.curation_common import display_name, join_keywords, ordered_union
from app.services.projects import effective_settings, require_project
from app.services.reembed import reembed

Pair = tuple[str, str]
_TRUNCATED = "...truncated"


def limit_ids(ids: list[str], cap: int, method: str) -> list[str]:
    """KEEP keeps the oldest `cap` ids, FIFO the newest (reference §4.2 step 3)."""
    if len(ids) <= cap:
        return ids
    return ids[:cap] if method == "KEEP" else ids[-cap:]


def first_known_type(types: list[str]) -> str:
    for value in types:
        if value and value.lower() != "unknown":
            return value
    return "unknown"


@dataclass
class RelationPlan:
    delete_pairs: list[Pair] = field(default_factory=list)
    new_rows: list[dict] = field(default_factory=list)
    new_sources: list[dict] = field(default_factory=list)
    redirected: int = 0
    merged: int = 0
    self_loops: int = 0


class EntityMergeService:
    def __init__(self, c: Container) -> None:
        self.c = c
        self.settings: Settings = c.settings

    async def merge(self, body: MergeRequest) -> MergeReport:
        s = self.settings
        pid = body.project_id
        target_name = display_name(body.target_entity, s.entity_name_max_length)
        tkey = entity_key(target_name)
        raw_by_key: dict[str, str] = {}
        for raw in body.source_entities:
            key = lookup_key(sanitize(raw), s.entity_name_max_length)
            if not key:
                raise InvalidInput(f"'{raw}' is not a usable entity name", code="invalid_entity_name")
            raw_by_key.setdefault(key, raw)
        source_keys = list(raw_by_key)
        involved = ordered_union(source_keys, [tkey])
        data = body.target_entity_data

        async with self.c.db.transaction() as conn:
            await require_project(conn, pid)
            await graph_repo.lock_keys(conn, pid, involved)
            found = await repo.get_entities(conn, pid, involved)
            missing = [raw for key, raw in raw_by_key.items() if key not in found]
            if missing:
                raise NotFound(f"Entities not found: {', '.join(repr(m) for m in missing)}",
                               code="entity_not_found")
            language = await self._language(conn, pid)
            rows = [found[k] for k in involved if k in found]  # sources in request order, then the target
            merged_keys = [k for k in source_keys if k != tkey]

            description = (sanitize(data.description) if data and data.description else None) or await self._combine(
                body.strategy, "entity", target_name, [r["description"] for r in rows], language, pid)
            entity_type = (normalize_type(data.entity_type) if data and data.entity_type
                           else first_known_type([r["entity_type"] for r in rows]))
            values = {
                "name": target_name, "entity_type": entity_type, "description": description, "curated": True,
                "source_ids": limit_ids(ordered_union(*[r["source_ids"] for r in rows]),
                                        s.max_source_ids_per_entity, s.source_ids_limit_method),
                "file_paths": self._paths(*[r["file_paths"] for r in rows]),
            }
            plan = await self._plan_relations(conn, pid, involved, tkey, target_name, body.strategy, language)

            if tkey in found:
                await repo.update_entity(conn, pid, tkey, values)
            else:
                await repo.insert_entity(conn, pid, {"key": tkey, **values})
            await repo.copy_entity_sources(conn, pid, merged_keys, tkey)
            await repo.delete_relations(conn, pid, plan.delete_pairs)
            await repo.delete_entities(conn, pid, merged_keys)
            await repo.insert_relations(conn, pid, plan.new_rows)
            await repo.insert_relation_sources(conn, pid, plan.new_sources)
            await reembed(conn, self.c.embedder, pid, entity_keys=[tkey], touching=[tkey])

        return MergeReport(
            target=target_name, merged_sources=[found[k]["name"] for k in merged_keys],
            relations_redirected=plan.redirected, relations_merged=plan.merged, self_loops_dropped=plan.self_loops,
        )

    async def _plan_relations(self, conn: AsyncConnection, pid: str, involved: list[str], tkey: str,
                              target_name: str, strategy: MergeStrategy, language: str) -> RelationPlan:
        """Point every relation of the involved entities at the target; drop self-loops; merge collisions."""
        s = self.settings
        plan = RelationPlan()
        rank = {k: i for i, k in enumerate(involved)}
        far = len(involved)
        rels = sorted(await repo.relations_touching(conn, pid, involved),
                      key=lambda r: (min(rank.get(r["src_key"], far), rank.get(r["tgt_key"], far)),
                                     r["src_key"], r["tgt_key"]))
        groups: dict[Pair, list[dict]] = {}
        names: dict[str, str] = {tkey: target_name}
        for rel in rels:
            src = tkey if rel["src_key"] in rank else rel["src_key"]
            tgt = tkey if rel["tgt_key"] in rank else rel["tgt_key"]
            names.setdefault(rel["src_key"], rel["src_name"])
            names.setdefault(rel["tgt_key"], rel["tgt_name"])
            if src == tgt:
                plan.self_loops += 1
                plan.delete_pairs.append((rel["src_key"], rel["tgt_key"]))
                continue
            pair = sorted_pair(src, tgt)
            if pair != (rel["src_key"], rel["tgt_key"]):
                plan.redirected += 1
            groups.setdefault(pair, []).append(rel)

        changed = {p: m for p, m in groups.items() if len(m) > 1 or (m[0]["src_key"], m[0]["tgt_key"]) != p}
        provenance: dict[Pair, list[dict]] = {}
        for row in await repo.relation_sources_of(
                conn, pid, [(m["src_key"], m["tgt_key"]) for members in changed.values() for m in members]):
            provenance.setdefault((row["src_key"], row["tgt_key"]), []).append(row)

        for pair, members in changed.items():
            old_pairs = [(m["src_key"], m["tgt_key"]) for m in members]
            plan.delete_pairs.extend(old_pairs)
            plan.merged += len(members) - 1
            label = f"{names[pair[0]]} - {names[pair[1]]}"
            plan.new_rows.append({
                "src_key": pair[0], "tgt_key": pair[1],
                "description": await self._combine(strategy, "relation", label,
                                                   [m["description"] for m in members], language, pid),
                "keywords": join_keywords(*[m["keywords"] for m in members]),
                "weight": sum(float(m["weight"]) for m in members), "curated": True,
                "source_ids": limit_ids(ordered_union(*[m["source_ids"] for m in members]),
                                        s.max_source_ids_per_relation, s.source_ids_limit_method),
                "file_paths": self._paths(*[m["file_paths"] for m in members]),
            })
            seen: dict[str, dict] = {}
            for row in sorted((r for p in old_pairs for r in provenance.get(p, [])), key=lambda r: r["seq"]):
                seen.setdefault(row["chunk_id"], {"src_key": pair[0], "tgt_key": pair[1], "chunk_id": row["chunk_id"],
                                                  "document_id": row["document_id"], "seq": row["seq"]})
            plan.new_sources.extend(seen.values())
        return plan

    def _paths(self, *lists: list[str] | None) -> list[str]:
        paths = [p for p in ordered_union(*lists) if not p.startswith(_TRUNCATED)]
        return limit_ids(paths, self.settings.max_file_paths, self.settings.source_ids_limit_method)

    async def _language(self, conn: AsyncConnection, pid: str) -> str:
        row = await projects_repo.get(conn, pid)
        return effective_settings(self.settings, row["settings"] if row else None).language

    async def _combine(self, strategy: MergeStrategy, kind: str, name: str, descriptions: list[str],
                       language: str, pid: str) -> str:
        texts = [d.strip() for d in descriptions if d and d.strip()]
        if not texts:
            return ""
        if strategy == "keep_first":
            return texts[0]
        if strategy == "keep_longest":
            return max(texts, key=len)  # the first of equally long ones
        parts = ordered_union(*[[f.strip() for f in fragments(t)] for t in texts])
        if strategy == "concatenate" or len(parts) <= 1:
            return join_fragments(parts)
        # llm_summarize: the caller asked for an LLM-written text, so summarise from two fragments on.
        from app.services.summarize import Summarizer  # imported late: it pulls in the LLM cache stack

        forced = self.settings.model_copy(update={"force_llm_summary_on_merge": 2})
        summarizer = Summarizer(self.c.db, self.c.llm, self.c.tokenizer, forced)
        return await summarizer.summarize("entity" if kind == "entity" else "relation", name, parts, language,
                                          project_id=pid)
