"""Queueing updates of documents (new text under the same id) and listing their versions.

An update is a document row of its own, `<id>@v<n>`, whose `update_of` names the document: the worker
processes it like a document (status, progress, cancel, retry) while the document keeps answering with its
current version, and applies it by chunk diff (app/services/update/runner.py). The same text as the current
version changes nothing. A document not `processed` yet (pending, processing, failed, cancelled) cannot be
updated: 409, retry or delete it first. A document with an update queued or running refuses another one
with different text (409 `update_in_progress`); the same text again answers with the queued update.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncConnection

from app.container import Container
from app.core.errors import (
    AppError,
    Conflict,
    EmbeddingNotConfigured,
    InvalidInput,
    LLMNotConfigured,
    PayloadTooLarge,
    document_not_found,
)
from app.repositories import deletion as deletion_repo
from app.repositories import document_versions as versions_repo
from app.repositories import documents as docs_repo
from app.schemas.document_versions import DocumentUpdateResult, DocumentVersionOut, DocumentVersions
from app.schemas.documents import IngestItem
from app.services.ingest.intake import IngestionService, Submission, canonical_path, content_hash, sanitize_text
from app.services.projects import require_project

_QUEUED = ("pending", "processing")


def update_id_of(document_id: str, version: int) -> str:
    return f"{document_id}@v{version}"


@dataclass
class UpdateInput:
    text: str
    file_path: str | None = None
    metadata: dict | None = None


class DocumentUpdates:
    def __init__(self, c: Container) -> None:
        self.c = c
        self.settings = c.settings
        self.created: set[str] = set()  # the updates this request queued (its waited usage is charged for them)

    def checked_text(self, text: str) -> str:
        clean = sanitize_text(text)
        if not clean:
            raise InvalidInput("empty or whitespace-only text", code="invalid_documents")
        limit = self.settings.max_document_chars
        if len(clean) > limit:
            raise PayloadTooLarge(
                f"text has {len(clean)} characters, above the limit of {limit}", code="document_too_large"
            )
        return clean

    async def submit(self, project_id: str, document_id: str, item: UpdateInput) -> DocumentUpdateResult:
        """Queue the new text as an update of the document (or nothing, if it is the current text)."""
        text = self.checked_text(item.text)
        if not self.c.llm.configured:  # the update would fail: say so now, store nothing
            raise LLMNotConfigured()
        if not self.c.embedder.configured:
            raise EmbeddingNotConfigured()
        async with self.c.db.transaction() as conn:
            await require_project(conn, project_id)
            result = await self.submit_on(conn, project_id, document_id, text, item)
        if result.status == "pending" and self.c.worker is not None:
            self.c.worker.notify()
        return result

    async def submit_on(
        self, conn: AsyncConnection, project_id: str, document_id: str, text: str, item: UpdateInput
    ) -> DocumentUpdateResult:
        """As `submit`, on the caller's transaction, with `text` already sanitised and checked."""
        digest = content_hash(text)
        if document_id not in await deletion_repo.lock_documents(conn, project_id, [document_id]):
            raise document_not_found(document_id)
        doc = await docs_repo.get(conn, project_id, document_id)
        assert doc is not None  # locked above
        if doc.update_of is not None:
            raise InvalidInput(
                f"'{document_id}' is an update of '{doc.update_of}': update that document", code="not_a_document"
            )
        if doc.content_hash == digest:
            return DocumentUpdateResult(id=document_id, status="unchanged", version=doc.version)
        if doc.status != "processed":
            raise Conflict(
                f"Document '{document_id}' is {doc.status}; update it once processed (or retry or delete it)",
                code="document_processing" if doc.status in _QUEUED else "document_not_processed",
            )
        updates = await versions_repo.updates_of(conn, project_id, document_id)
        for queued in (u for u in updates if u["status"] in _QUEUED):
            row = await docs_repo.get(conn, project_id, queued["id"])
            if row is not None and row.content_hash.split("@", 1)[0] == digest:
                return DocumentUpdateResult(
                    id=document_id, status=queued["status"], update_id=queued["id"], version=doc.version + 1
                )
            raise Conflict(
                f"Document '{document_id}' has an update in progress ('{queued['id']}'); cancel it or wait",
                code="update_in_progress",
            )
        owner = await versions_repo.owner_of_hash(conn, project_id, digest)
        if owner is not None:
            raise Conflict(f"Document '{owner}' has this text already", code="duplicate_content")
        await versions_repo.delete_updates(conn, project_id, [u["id"] for u in updates])  # finished or given up
        update_id = update_id_of(document_id, doc.version + 1)
        await docs_repo.insert_new(
            conn,
            project_id,
            [
                {
                    "id": update_id,
                    "status": "pending",
                    "content": text,
                    # the document takes the real hash when the update is applied (the hash is unique)
                    "content_hash": f"{digest}@{update_id}",
                    "content_length": len(text),
                    "file_path": canonical_path(item.file_path) or doc.file_path,
                    "metadata": doc.metadata if item.metadata is None else item.metadata,
                    "update_of": document_id,
                }
            ],
        )
        self.created.add(update_id)
        return DocumentUpdateResult(id=document_id, status="pending", update_id=update_id, version=doc.version + 1)

    async def enqueue(
        self, project_id: str, items: list[Submission], wait: bool, *, by_file_name: bool = False
    ) -> tuple[list[IngestItem], bool]:
        """POST /documents and uploads: an item naming an existing document (its id, or with `by_file_name`
        its file name) with other text updates it; the others are ingested as new documents."""
        targets, shared = await self._targets(project_id, items, by_file_name)
        results: list[IngestItem | None] = [None] * len(items)
        for index, error in shared.items():
            results[index] = IngestItem(id=None, status="rejected", error=error, file_path=items[index].file_path)
        update_ids: list[str] = []
        for index, target in targets.items():
            item = items[index]
            try:
                results[index] = result = await self._update(project_id, target, item)
            except AppError as exc:
                results[index] = IngestItem(id=target, status="rejected", error=exc.detail, file_path=item.file_path)
                continue
            if result.update_id is not None:
                update_ids.append(result.update_id)
        intake = IngestionService(self.c)
        rest = [i for i in range(len(items)) if i not in targets and i not in shared]
        finished = True
        if rest:
            ingested, finished = await intake.enqueue(project_id, [items[i] for i in rest], wait)
            for i, result in zip(rest, ingested, strict=True):
                results[i] = result
        if wait and update_ids:
            updated, states = await intake.wait_until_done(project_id, update_ids)
            intake.charge_request(states, sorted(self.created))
            finished = finished and updated
            for r in results:
                state = states.get(r.update_id or "") if r is not None else None
                if r is not None and state is not None:
                    r.status, r.error = state.status, state.error
        return [r for r in results if r is not None], finished if wait else False

    async def enqueue_one(self, project_id: str, item: Submission) -> IngestItem:
        """One text as POST /documents takes it (an existing document's id with other text updates it), without
        waiting; an update refused (one in progress, the document not processed yet) raises its error."""
        targets, _ = await self._targets(project_id, [item], by_file_name=False)
        if 0 in targets:
            return await self._update(project_id, targets[0], item)
        (result,), _ = await IngestionService(self.c).enqueue(project_id, [item], wait=False)
        return result

    async def _update(self, project_id: str, target: str, item: Submission) -> IngestItem:
        text = self.checked_text(item.text)
        done = await self.submit(project_id, target, UpdateInput(text, item.file_path, item.metadata or None))
        status = "duplicate" if done.status == "unchanged" else done.status
        return IngestItem(id=target, status=status, file_path=item.file_path, update_id=done.update_id)

    async def _targets(
        self, project_id: str, items: list[Submission], by_file_name: bool
    ) -> tuple[dict[int, str], dict[int, str]]:
        """index → the existing document each item updates (same id, or same file name), text not compared yet;
        and index → why an item is refused: its file name is several documents' (which one it updates would be a
        guess: the caller names one by its id)."""
        async with self.c.db.connect() as conn:
            await require_project(conn, project_id)
            ids = {item.id for item in items if item.id and item.error is None}
            existing = {r.id for r in await docs_repo.find_existing(conn, project_id, sorted(ids), [])}
            names = [p for item in items if not item.id and (p := canonical_path(item.file_path))]
            by_name = await versions_repo.document_ids_by_path(conn, project_id, names) if by_file_name else {}
        targets: dict[int, str] = {}
        shared: dict[int, str] = {}
        for index, item in enumerate(items):
            if item.error is not None:
                continue
            if item.id in existing:
                targets[index] = item.id
                continue
            name = canonical_path(item.file_path) or ""
            named = by_name.get(name, []) if not item.id else []
            if len(named) == 1:
                targets[index] = named[0]
            elif named:
                listed = ", ".join(named[:5]) + (", ..." if len(named) > 5 else "")
                shared[index] = (
                    f"{len(named)} documents are named '{name}' ({listed}): update one by its id "
                    "(PUT /documents/{id}, or a POST /documents item with that id)"
                )
        return targets, shared

    async def versions(self, project_id: str, document_id: str) -> DocumentVersions:
        async with self.c.db.read() as conn:
            await require_project(conn, project_id)
            doc = await docs_repo.get(conn, project_id, document_id)
            if doc is None or doc.update_of is not None:
                raise document_not_found(document_id)
            recorded = await versions_repo.versions(conn, project_id, document_id)
            updates = await versions_repo.updates_of(conn, project_id, document_id)
        current = doc.version
        out = [
            DocumentVersionOut(**{**r, "state": "current" if r["version"] == current else "previous"}) for r in recorded
        ]
        if not any(r["version"] == current for r in recorded):  # never updated: its first version
            out.append(
                DocumentVersionOut(
                    version=current,
                    state="current",
                    content_hash=doc.content_hash,
                    content_length=doc.content_length,
                    chunks_count=doc.chunks_count,
                    updated_at=doc.updated_at,
                )
            )
        for u in updates:
            version = int(u["id"].rsplit("@v", 1)[1])
            if version > current:  # applied updates are the versions above
                out.append(
                    DocumentVersionOut(
                        version=version,
                        state=u["status"] if u["status"] != "processed" else "processing",
                        update_id=u["id"],
                        updated_at=u["updated_at"],
                        error=u["error"],
                        progress=u["progress"],
                    )
                )
        return DocumentVersions(document_id=document_id, version=current, versions=out)


async def update_and_wait(
    c: Container, project_id: str, document_id: str, item: UpdateInput, wait: bool
) -> tuple[DocumentUpdateResult, bool]:
    """Submit an update; with `wait`, until it ends. Returns the result and whether it has ended."""
    updates = DocumentUpdates(c)
    result = await updates.submit(project_id, document_id, item)
    if result.update_id is None:
        return result, True
    if not wait:
        return result, False
    intake = IngestionService(c)
    done, states = await intake.wait_until_done(project_id, [result.update_id])
    intake.charge_request(states, sorted(updates.created))
    state = states.get(result.update_id)
    if state is not None:
        result.status, result.error = state.status, state.error
    return result, done
