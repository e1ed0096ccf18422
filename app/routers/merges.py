"""The ledger of automatic merges and their undoing: thin HTTP mapping over services/merges/ (ledger.py,
unmerge.py). Included before the entities router, whose `/entities/{name:path}` would take
`/entities/merges` and `/entities/{name}/merges`."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from app.schemas.merges import MergeDecision, MergeEntry, MergeLedger, UnmergeReport, UnmergeRequest
from app.services.merges.ledger import MergeLedgerService
from app.services.merges.unmerge import UnmergeService
from app.web.auth import ProjectScopedRoute
from app.web.deps import ContainerDep, ProjectQuery
from app.web.openapi import MODELS_UNAVAILABLE, errors

router = APIRouter(tags=["entities"], route_class=ProjectScopedRoute, responses=errors(503))

Limit = Annotated[int, Query(ge=1, le=1000)]
Offset = Annotated[int, Query(ge=0, le=10_000_000)]
EntryId = Annotated[int, Path(ge=1, le=2**63 - 1)]
_NO_ENTRY = (404, "Unknown project or ledger entry (`project_not_found`, `merge_entry_not_found`)")
_UNDONE = (409, "The entry was undone already (`merge_already_undone`)")


@router.get("/entities/merges", response_model=MergeLedger, responses=errors(404))
async def list_merges(
    c: ContainerDep,
    project_id: ProjectQuery = "default",
    entity: Annotated[
        str | None, Query(min_length=1, max_length=1000, description="Merges into or of this entity")
    ] = None,
    document_id: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
    rule: Annotated[str | None, Query(min_length=1, max_length=50)] = None,
    limit: Limit = 50,
    offset: Offset = 0,
) -> MergeLedger:
    """The ledger of automatic merges, newest first: which names entity resolution merged into which entity,
    by which rule (or the judge), with its evidence and the document that caused it, and what became of it."""
    return await MergeLedgerService(c).list_entries(project_id, entity, document_id, rule, limit, offset)


@router.post("/entities/merges/{entry_id}/accept", response_model=MergeEntry, responses=errors(_NO_ENTRY, _UNDONE))
async def accept_merge(entry_id: EntryId, body: MergeDecision, c: ContainerDep) -> MergeEntry:
    """Keep an automatic merge and mark it confirmed."""
    return await MergeLedgerService(c).confirm(entry_id, body)


@router.post(
    "/entities/merges/{entry_id}/reject",
    response_model=UnmergeReport,
    responses=errors(_NO_ENTRY, _UNDONE, MODELS_UNAVAILABLE),
)
async def reject_merge(entry_id: EntryId, body: MergeDecision, c: ContainerDep) -> UnmergeReport:
    """Undo an automatic merge (as `POST /entities/{name}/unmerge`) and keep the names apart for good."""
    return await MergeLedgerService(c).reject(entry_id, body)


@router.get(
    "/entities/{name:path}/merges",
    response_model=MergeLedger,
    responses=errors((404, "Unknown project or entity (`project_not_found`, `entity_not_found`)")),
)
async def entity_merges(
    name: str, c: ContainerDep, project_id: ProjectQuery = "default", limit: Limit = 50, offset: Offset = 0
) -> MergeLedger:
    """The automatic merges into this entity (or of it, for a name that was merged), newest first."""
    return await MergeLedgerService(c).of_entity(project_id, name, limit, offset)


@router.post(
    "/entities/{name:path}/unmerge",
    response_model=UnmergeReport,
    responses=errors(
        (
            404,
            "Unknown project, entity or ledger entry (`project_not_found`, `entity_not_found`, "
            "`merge_entry_not_found`)",
        ),
        (
            409,
            "Nothing merged into it automatically, or merged by hand (`no_automatic_merge`); entry undone "
            "already (`merge_already_undone`)",
        ),
        MODELS_UNAVAILABLE,
    ),
)
async def unmerge_entity(name: str, body: UnmergeRequest, c: ContainerDep) -> UnmergeReport:
    """Undo automatic merges into the entity: the absorbed names (`names`, one ledger entry `entry_id`, or
    all when neither is given; or the absorbed name itself in the path) become entities again, rebuilt from
    the cached extraction records of the chunks that named them — no extraction call; descriptions are
    summarised only where a rebuild would be. The aliases go, the ledger entries are marked undone and,
    unless `keep_apart` is false, resolution never merges the pairs again."""
    return await UnmergeService(c).unmerge(name, body)
