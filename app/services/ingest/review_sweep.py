"""The resolution review of a document that no attempt will finish.

After a document's merge and its summaries and embeddings, its final pass (absorb.py::Absorber.review) absorbs
earlier nodes its names show to be aliases and undoes standing merges it makes ambiguous or contradicts ("Robert
Everly" merged into "Bob Everly" before a document related the two). An attempt ending after the merge committed
leaves that to the document's retry; a document failed for good (a failure never retried, its attempts used up)
has none. So the merge marks the document as owing its review (migration 0022; in the statement that sets
`graph_merged`, no statement more), its final write clears the mark once processed, and any worker sweeps the
documents no attempt is processing that still owe it: at its start and at each heartbeat interval, one at a
time under a lease. The review reads what the document stored (its nodes, its records: no extraction call); an
absorption or undo done already is not done again (the pass reads the committed graph, an undo needs a standing
merge), so two workers reviewing one document change the graph once. An update failed for good after its swap
(app/services/update/runner.py) owes the same review of the document it updated: its row is marked, and the
sweep reviews that document's nodes and the records of its current chunks.
"""

from __future__ import annotations

import logging

from app.db.engine import Database
from app.repositories import owed_reviews as repo
from app.services.ingest.absorb import Absorber, UndoMerge

log = logging.getLogger(__name__)


class ReviewSweep:
    def __init__(self, db: Database, absorber: Absorber) -> None:
        self.db = db
        self.absorber = absorber

    async def sweep(self, undo: UndoMerge, lease_seconds: float) -> int:
        """Review the documents owing it that no attempt is processing, one at a time under a lease (a sweep that
        dies leaves its document to another after `lease_seconds`); how many were reviewed."""
        done = 0
        while True:
            async with self.db.transaction() as conn:
                owed = await repo.take_owed(conn, lease_seconds)
            if owed is None:
                return done
            await self.absorber.review(owed.project_id, owed.review_of, undo, None, None)
            async with self.db.transaction() as conn:
                await repo.reviewed(conn, owed.project_id, owed.row_id)
            log.info("document %s/%s: its resolution review done by a sweep", owed.project_id, owed.row_id)
            done += 1
