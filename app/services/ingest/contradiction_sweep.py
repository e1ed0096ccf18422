"""The undo of a contradicted merge owed by a document that no attempt will finish.

A document relating two writings of a person's name ("Bob Everly" / "Robert Everly") undoes, after its final
pass, a standing merge that joined them (absorb.py::Absorber.contradicted). An attempt ending after the merge
committed leaves that to the document's retry; a document failed for good (a failure never retried, its attempts
used up) has none. So its merge transaction also writes a row owing the check
(repositories/contradicted_merges.py, migration 0022), removed when the document's own attempt has done it, and
any worker sweeps the rows of documents no attempt is processing: at its start and at each heartbeat interval.
The sweep reads the document's stored records (no extraction call) and undoes what they contradict; an undo done
already is refused by the unmerge (a standing merge only), so two workers sweeping one row undo it once.
"""

from __future__ import annotations

import logging

from app.db.engine import Database
from app.repositories import contradicted_merges as repo
from app.services.ingest.absorb import Absorber, UndoMerge

log = logging.getLogger(__name__)


class ContradictionSweep:
    def __init__(self, db: Database, absorber: Absorber) -> None:
        self.db = db
        self.absorber = absorber

    async def checked(self, project_id: str, document_id: str) -> None:
        """The document's own attempt undid what it contradicts: nothing owed any more."""
        async with self.db.transaction() as conn:
            await repo.checked(conn, project_id, document_id)

    async def sweep(self, undo: UndoMerge, lease_seconds: float) -> int:
        """Do the owed checks of documents no attempt is processing, one at a time under a lease (a sweep that
        dies leaves its row to another after `lease_seconds`); how many were done."""
        done = 0
        while True:
            async with self.db.transaction() as conn:
                owed = await repo.take_owed(conn, lease_seconds)
            if owed is None:
                return done
            project_id, document_id = owed
            merges = await self.absorber.contradicted(project_id, document_id, None)
            for merge in merges:
                await undo(project_id, merge)
            await self.checked(project_id, document_id)
            if merges:
                log.info(
                    "document %s/%s: %d contradicted merge(s) undone by a sweep", project_id, document_id, len(merges)
                )
            done += 1
