"""The ledger of automatic merges, for review: list it (by entity, document or rule), confirm an entry (the
merge stays and is marked reviewed), or reject one (undone and kept apart: services/merges/unmerge.py)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from app.core.errors import Conflict
from app.repositories import graph_curation as curation_repo
from app.repositories import merge_ledger as ledger_repo
from app.repositories.merge_ledger import LedgerEntry
from app.schemas.merges import MergeDecision, MergeEntry, MergeLedger, UnmergeReport, UnmergeRequest
from app.services.graph.gate import CurationBase
from app.services.graph.lookups import not_found
from app.services.merges.unmerge import UnmergeService, merge_entry_not_found
from app.services.projects import require_project

_JUDGES = ("llm", "judge")
ACCEPTED_RULE = "accepted"  # the rule of a duplicate suggestion a user accepted (services/merges/suggestions.py)


def entry_out(e: LedgerEntry) -> MergeEntry:
    undone = e.outcome in ("undone", "rejected")
    return MergeEntry(
        id=e.id,
        entity=e.entity_name or e.entity_key,
        absorbed=[e.merged_name],
        rule=e.rule,
        by="judge" if e.rule in _JUDGES else "review" if e.rule == ACCEPTED_RULE else "rule",
        evidence=e.evidence,
        document_id=e.document_id,
        file_name=e.file_path,
        retroactive=e.retroactive,
        created_at=e.created_at,
        status=e.outcome or "standing",
        undone_at=e.decided_at if undone else None,
        confirmed_at=e.decided_at if e.outcome == "confirmed" else None,
    )


class MergeLedgerService(CurationBase):
    async def list_entries(
        self,
        project_id: str,
        entity: str | None,
        document_id: str | None,
        rule: str | None,
        limit: int,
        offset: int,
    ) -> MergeLedger:
        async with self.db.connect() as conn:
            await require_project(conn, project_id)
            keys = None
            if entity is not None:  # the name as given, and the entity it is an alias of
                keys = sorted({self._key(entity), await self._resolve(conn, project_id, entity)})
            found, total = await ledger_repo.list_entries(
                conn, project_id, keys=keys, document_id=document_id, rule=rule, limit=limit, offset=offset
            )
        return MergeLedger(entries=[entry_out(e) for e in found], total=total, limit=limit, offset=offset)

    async def of_entity(self, project_id: str, name: str, limit: int, offset: int) -> MergeLedger:
        """The merges into the entity (or of it, for a name that was absorbed); 404 when neither is known."""
        listed = await self.list_entries(project_id, name, None, None, limit, offset)
        if not listed.total:
            async with self.db.connect() as conn:
                if not await self._exists(conn, project_id, await self._resolve(conn, project_id, name)):
                    raise not_found(name)
        return listed

    async def confirm(self, entry_id: int, body: MergeDecision) -> MergeEntry:
        """Keep the merge and mark it reviewed (409 once it is undone)."""
        pid = body.project_id
        async with self._locked(pid, []) as conn:
            entry = await ledger_repo.get_entry(conn, pid, entry_id)
            if entry is None:
                raise merge_entry_not_found(entry_id)
            if entry.outcome in ("undone", "rejected"):
                raise Conflict(f"Merge entry {entry_id} was {entry.outcome} already", code="merge_already_undone")
            await ledger_repo.set_outcome(conn, pid, [entry_id], "confirmed")
            entry = await ledger_repo.get_entry(conn, pid, entry_id)
        assert entry is not None
        return entry_out(entry)

    async def reject(self, entry_id: int, body: MergeDecision) -> UnmergeReport:
        """Undo the merge and keep the names apart for good."""
        pid = body.project_id
        async with self.db.connect() as conn:
            await require_project(conn, pid)
            entry = await ledger_repo.get_entry(conn, pid, entry_id)
        if entry is None:
            raise merge_entry_not_found(entry_id)
        request = UnmergeRequest(project_id=pid, entry_id=entry_id, keep_apart=True)
        return await UnmergeService(self.c).unmerge(entry.entity_key, request, outcome="rejected")

    @staticmethod
    async def _exists(conn: AsyncConnection, project_id: str, key: str) -> bool:
        return await curation_repo.get_entity(conn, project_id, key) is not None
