"""Accept a duplicate suggestion: merge the duplicate into the entity kept (its name becomes an alias), as an
automatic merge is made (texts not marked curated), and record it in the merge ledger, confirmed, with rule
`accepted`: the unmerge (unmerge.py) undoes it from the cached extraction records, as it undoes an automatic
merge. A duplicate made by hand has no extracted text to be rebuilt from: it merges without a ledger entry."""

from __future__ import annotations

from app.repositories import aliases as alias_repo
from app.repositories import graph as graph_repo
from app.repositories import merge_ledger as ledger_repo
from app.schemas.duplicates import DuplicateAccept, DuplicateAccepted
from app.schemas.graph import MergeRequest
from app.services.graph.duplicates import DuplicateService, both_entities
from app.services.graph.entity_merge import EntityMergeService
from app.services.merges.ledger import ACCEPTED_RULE, entry_out


class SuggestionService(DuplicateService):
    async def accept(self, body: DuplicateAccept) -> DuplicateAccepted:
        project_id = body.project_id
        async with self.db.connect() as conn:
            kept, merged = await self.two_keys(conn, project_id, body.entity, body.duplicate)
            found = await both_entities(conn, project_id, {kept: body.entity, merged: body.duplicate})
            suggested = await alias_repo.suggestion_evidence(conn, project_id, kept, merged)
        request = MergeRequest(
            project_id=project_id,
            source_entities=[found[merged].name],
            target_entity=found[kept].name,
            strategy="concatenate",
        )
        report = await EntityMergeService(self.c).merge(request, by_hand=False)
        evidence = "; ".join(["accepted from the duplicate suggestions", *([suggested] if suggested else [])])
        async with self.db.transaction() as conn:
            await graph_repo.lock_keys(conn, project_id, [merged, kept])
            await alias_repo.remove_suggestions(conn, project_id, [(kept, merged)])
            if not found[merged].source_ids:
                return DuplicateAccepted(merge=report, entry=None)
            entry_id = await ledger_repo.add_confirmed(
                conn, project_id, kept, merged, found[merged].name, ACCEPTED_RULE, evidence
            )
            entry = await ledger_repo.get_entry(conn, project_id, entry_id)
        assert entry is not None
        return DuplicateAccepted(merge=report, entry=entry_out(entry))
