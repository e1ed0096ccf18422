"""The last stages of ingestion, after the merge: summarise a document's over-threshold entities and
relations, then embed the ones whose text changed.

Summaries are folded in under the key locks and embeddings written compare-and-set on the description
(without key locks), so a concurrent document's newer merge is never overwritten (that document finalises
it). No lock is held during an LLM or embedding call.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import replace
from functools import partial

from app.container import Container
from app.core.errors import first_failure
from app.domain.rows import EntityEmbeddingUpdate, EntityText, Pair, RelationEmbeddingUpdate, RelationText
from app.domain.texts import fragments, join_fragments
from app.repositories import graph as graph_repo
from app.repositories import summary_marks as marks_repo
from app.services.graph.embedding import embed_changed
from app.services.graph.gate import locked_keys
from app.services.graph.summaries import Kind, Summarizer
from app.services.ingest.graph_merge import Touched, item_idents
from app.services.ingest.last_writers import LastWriters
from app.services.ingest.reporting import error_text, stage

log = logging.getLogger(__name__)

# An item whose description holds this many times FORCE_LLM_SUMMARY_ON_MERGE fragments is summarised by any
# document touching it: the document that took it over the threshold has evidently not folded its summary.
_STRANDED = 2
_EMBED_BATCH = 16  # vectors written per transaction (see Finaliser._embed_graph)
_UNIT = chr(31)  # between the parts of an item's name in its fleet-wide summary mark
_ROUNDS = 2  # a summary, then once more if fragments merged meanwhile took the item over the threshold again


def fold_summary(current: str, summarised: str, summary: str) -> str | None:
    """The description after writing `summary` of `summarised`, or None when there is nothing to write.

    A document merged meanwhile only appends fragments, so `current` usually starts with the summarised
    ones: the summary replaces that prefix and the newer fragments stay (no summary call is wasted and
    nothing of the newer merge is lost). If the prefix is gone, the summary is dropped.
    """
    done, now = fragments(summarised), fragments(current)
    if not summary or now[: len(done)] != done:
        return None
    folded = join_fragments([summary, *now[len(done) :]])
    return folded if folded != current else None


def summary_owner(s: Summarizer, prior: dict[str | Pair, str] | None, item: str | Pair, description: str) -> bool:
    """Whether this document summarises the item: its description is over the threshold and this
    document's merge took it there (or it is unknown who did: a retry).

    Documents merging while an item's summary is in flight (in any worker process) only append fragments;
    the summarising document folds its summary in front of them and summarises once more if they took the
    item over the threshold again. Without this rule each of them summarised the item too, and all but the
    first fold were thrown away. A description left far over the threshold (its summarising document
    failed for good) is taken up by the next document that touches it.
    """
    if not s.needs_llm(fragments(description)):
        return False
    if prior is None:
        return True
    before = fragments(prior.get(item, ""))
    return not s.needs_llm(before) or len(before) >= _STRANDED * s.settings.force_llm_summary_on_merge


class Finaliser:
    def __init__(
        self, c: Container, summarizer: Summarizer, last_writers: LastWriters, timings: dict[str, float]
    ) -> None:
        self.c = c
        self.settings = c.settings
        self.summarizer = summarizer
        self.last_writers = last_writers
        self.timings = timings
        self._summarising: dict[tuple, asyncio.Event] = {}  # items being summarised by a document of this process

    async def finalise(
        self,
        project_id: str,
        document_id: str,
        language: str,
        touched: Touched,
        on_stage: Callable[[str], None] | None = None,
        refused: list[str] | None = None,
    ) -> None:
        """Summarise the document's over-threshold items, then embed the items whose text changed;
        `on_stage` hears "summarising", then "embedding". Items whose text the embedding endpoint refuses
        are described in `refused` (when given) while the others are embedded; without it they fail the call."""
        report = on_stage or (lambda _: None)
        report("summarising")
        with stage("summarise", self.timings):
            ents, rels = await self._claim_summaries(project_id, document_id, touched)
            try:
                async with self._marked(project_id, ents, rels, touched) as (marked_e, marked_r):
                    await self._summarise(project_id, marked_e, marked_r, language, touched)
            finally:
                self._release_summaries(project_id, ents, rels)
        report("embedding")
        with stage("embed", self.timings):
            should = self.last_writers.should_embed
            await self._embed_graph(
                project_id,
                {k: e for k, e in touched.entities.items() if should(touched, ("e", project_id, k))},
                {p: r for p, r in touched.relations.items() if should(touched, ("r", project_id, p))},
                refused,
            )

    async def embed_stored(self, project_id: str, touched: Touched) -> None:
        """After a failed finalisation, embed the stored text of the items the document was the last writer
        of: earlier documents skipped them for it, and nothing else would embed them until it is retried.
        Best effort: the document fails either way."""
        should = self.last_writers.should_embed
        keys = [k for k in touched.entities if should(touched, ("e", project_id, k))]
        pairs = [p for p in touched.relations if should(touched, ("r", project_id, p))]
        try:
            with stage("embed", self.timings):
                async with self.c.db.connect() as conn:
                    stored = Touched.of_rows(
                        await graph_repo.fetch_entities(conn, project_id, keys, with_sources=False),
                        await graph_repo.fetch_relations(conn, project_id, pairs, with_sources=False),
                    )
                await self._embed_graph(project_id, stored.entities, stored.relations, [])
        except Exception as exc:
            log.warning("could not embed the items of a failed document in %s: %s", project_id, error_text(exc))

    async def read_touched(self, project_id: str, document_id: str) -> Touched:
        async with self.c.db.connect() as conn:
            keys, pairs = await graph_repo.keys_of_document(conn, project_id, document_id)
            return Touched.of_rows(
                await graph_repo.fetch_entities(conn, project_id, keys, with_sources=False),
                await graph_repo.fetch_relations(conn, project_id, pairs, with_sources=False),
            )

    async def _claim_summaries(
        self, project_id: str, document_id: str, touched: Touched
    ) -> tuple[dict[str, EntityText], dict[Pair, RelationText]]:
        """The document's entities and relations whose description needs an LLM summary, claimed in this process.

        Documents sharing an entity finalise concurrently; without this both would summarise it (the second
        summary wasted). An item another document is summarising is waited for and re-read: once its summary
        is folded in, it is usually below the threshold again (official trigger semantics unchanged).
        """
        s = self.summarizer
        idents = item_idents(project_id, touched.entities, touched.relations)
        while True:
            busy = {self._summarising[i] for i in idents if i in self._summarising}
            if busy:
                await asyncio.gather(*(event.wait() for event in busy))
                touched.replace(await self.read_touched(project_id, document_id))
                continue
            owns = partial(summary_owner, s, touched.prior)
            ents = {k: e for k, e in touched.entities.items() if owns(k, e.description)}
            rels = {p: r for p, r in touched.relations.items() if owns(p, r.description)}
            for ident in item_idents(project_id, ents, rels):
                self._summarising[ident] = asyncio.Event()
            return ents, rels

    @asynccontextmanager
    async def _marked(
        self, project_id: str, ents: dict[str, EntityText], rels: dict[Pair, RelationText], touched: Touched
    ) -> AsyncIterator[tuple[dict[str, EntityText], dict[Pair, RelationText]]]:
        """Of the items this document would summarise, those no other worker process is summarising now and
        whose stored text still needs it (as stored now, in `touched` too), marked fleet-wide while the
        summaries run (repositories/summary_marks.py, in a transaction that holds nothing else).

        `_claim_summaries` keeps the documents of one process apart; across processes, a document whose
        merge took an item over the threshold again while another process's summary of it was in flight
        (or that found it stranded) summarised the very same fragments a second time, and one of the two
        folds was thrown away: about a fifth of the summary calls of four workers. The process holding the
        mark folds in what was merged meanwhile and summarises once more if that is over the threshold."""
        if not ents and not rels:
            yield ents, rels
            return
        idents = {f"e{_UNIT}{k}": k for k in ents} | {f"r{_UNIT}{s}{_UNIT}{t}": (s, t) for s, t in rels}
        async with self.c.db.transaction(seen_by_client=False) as conn:
            marked = {idents[i] for i in await marks_repo.try_marks(conn, project_id, list(idents))}
            stored = Touched.of_rows(
                await graph_repo.fetch_entities(conn, project_id, [k for k in ents if k in marked], with_sources=False),
                await graph_repo.fetch_relations(
                    conn, project_id, [p for p in rels if p in marked], with_sources=False
                ),
            )
            touched.entities.update(stored.entities)
            touched.relations.update(stored.relations)
            needs = self.summarizer.needs_llm
            yield (
                {k: e for k, e in stored.entities.items() if needs(fragments(e.description))},
                {p: r for p, r in stored.relations.items() if needs(fragments(r.description))},
            )

    def _release_summaries(self, project_id: str, ents: dict, rels: dict) -> None:
        for ident in item_idents(project_id, ents, rels):
            event = self._summarising.pop(ident, None)
            if event is not None:
                event.set()

    async def _summarise(
        self,
        project_id: str,
        ents: dict[str, EntityText],
        rels: dict[Pair, RelationText],
        language: str,
        touched: Touched,
    ) -> None:
        """Summarise the given (claimed, over-threshold) items, fold the summaries in, and update `touched`;
        once more for those that other documents' fragments, merged during the call, took over the
        threshold again (nobody else summarises them: see summary_owner)."""
        for _ in range(_ROUNDS):
            if not ents and not rels:
                return
            found_e, found_r = await self._summarise_round(project_id, ents, rels, language, touched)
            needs = self.summarizer.needs_llm
            ents = {k: touched.entities[k] for k in found_e if needs(fragments(touched.entities[k].description))}
            rels = {p: touched.relations[p] for p in found_r if needs(fragments(touched.relations[p].description))}

    async def _summarise_round(
        self,
        project_id: str,
        ents: dict[str, EntityText],
        rels: dict[Pair, RelationText],
        language: str,
        touched: Touched,
    ) -> tuple[set[str], set[Pair]]:
        """One summary per item, folded in under the key locks; the items still stored (with their current
        text in `touched`)."""
        s = self.summarizer
        ent_todo, rel_todo = list(ents.values()), list(rels.values())
        jobs: list[tuple[Kind, str, list[str]]] = [("entity", e.name, fragments(e.description)) for e in ent_todo]
        jobs += [("relation", f"({r.src_name}, {r.tgt_name})", fragments(r.description)) for r in rel_todo]
        batch = self.c.llm_cache.batch(project_id)
        if self.settings.enable_llm_cache_for_extract:
            await batch.prefetch([key for job in jobs if (key := s.first_call_key(*job, language))])
        try:  # a failure cancels the other summaries, so none writes to the batch after its flush
            async with batch.flushed_on_failure(), asyncio.TaskGroup() as group:
                tasks = [
                    group.create_task(s.summarize(*job, language, project_id=project_id, batch=batch)) for job in jobs
                ]
        except* Exception as errors:
            raise first_failure(errors) from None
        summaries = [task.result() for task in tasks]
        ent_new, rel_new = summaries[: len(ent_todo)], summaries[len(ent_todo) :]
        ent_done = {e.key: (e.description, new) for e, new in zip(ent_todo, ent_new, strict=True)}
        rel_done = {r.pair: (r.description, new) for r, new in zip(rel_todo, rel_new, strict=True)}
        # every write to graph rows happens under the key locks, so row locks never interleave (no deadlock)
        keys = [*ent_done, *(k for pair in rel_done for k in pair)]
        async with locked_keys(self.c.db, project_id, keys, gate=False, first=batch.flush, step="summarise") as conn:
            current_e = await graph_repo.fetch_entities(conn, project_id, list(ent_done), with_sources=False)
            current_r = await graph_repo.fetch_relations(conn, project_id, list(rel_done), with_sources=False)
            ent_rows = [
                (key, row.description, text)
                for key, row in sorted(current_e.items())
                if (text := fold_summary(row.description, *ent_done[key])) is not None
            ]
            rel_rows = [
                (*pair, row.description, text)
                for pair, row in sorted(current_r.items())
                if (text := fold_summary(row.description, *rel_done[pair])) is not None
            ]
            await graph_repo.set_entity_descriptions(conn, project_id, ent_rows)
            await graph_repo.set_relation_descriptions(conn, project_id, rel_rows)
        self.last_writers.wrote(
            touched, item_idents(project_id, [r[0] for r in ent_rows], [(r[0], r[1]) for r in rel_rows])
        )
        # what the rows hold now (read under the locks, plus our folds): what the embedding must describe
        current = Touched.of_rows(current_e, current_r)
        touched.entities.update(current.entities)
        touched.relations.update(current.relations)
        for key, _, text in ent_rows:
            touched.entities[key] = replace(touched.entities[key], description=text)
        for src, tgt, _, text in rel_rows:
            touched.relations[(src, tgt)] = replace(touched.relations[(src, tgt)], description=text)
        return set(current_e), set(current_r)

    async def _embed_graph(
        self,
        project_id: str,
        ents: dict[str, EntityText],
        rels: dict[Pair, RelationText],
        refused: list[str] | None = None,
    ) -> None:
        ent_done, rel_done = await embed_changed(self.c.embedder, ents.values(), rels.values(), refused)
        if not ent_done and not rel_done:
            return
        # Compare-and-set writes need no key locks: the rows no one holds are locked without waiting and
        # written at once; a row a merge holds (a hub entity, merged by every document) is written on its
        # own once that merge commits, each in a transaction holding nothing else. So embeddings never queue
        # behind merges on the key locks, and never wait while holding a row lock (no deadlock). The rows
        # are written a few at a time, each batch committed: a merge that reaches a row this transaction
        # holds waits for it while holding its own key locks (hub entities), so that wait is kept to one
        # short batch instead of the whole document's vectors and their index inserts.
        held_ents: list[EntityEmbeddingUpdate] = []
        held_rels: list[RelationEmbeddingUpdate] = []
        for ent_batch, rel_batch in _batches(ent_done, rel_done, _EMBED_BATCH):
            async with self.c.db.transaction() as conn:
                free_keys, free_pairs = await graph_repo.lock_rows_free_now(
                    conn, project_id, [u.key for u in ent_batch], [u.pair for u in rel_batch]
                )
                await graph_repo.set_entity_embeddings(conn, project_id, [u for u in ent_batch if u.key in free_keys])
                await graph_repo.set_relation_embeddings(
                    conn, project_id, [u for u in rel_batch if u.pair in free_pairs]
                )
            held_ents += [u for u in ent_batch if u.key not in free_keys]
            held_rels += [u for u in rel_batch if u.pair not in free_pairs]
        for ent in sorted(held_ents, key=lambda u: u.key):
            async with self.c.db.transaction() as conn:
                await graph_repo.set_entity_embeddings(conn, project_id, [ent])
        for rel in sorted(held_rels, key=lambda u: u.pair):
            async with self.c.db.transaction() as conn:
                await graph_repo.set_relation_embeddings(conn, project_id, [rel])


def _batches(
    ents: list[EntityEmbeddingUpdate], rels: list[RelationEmbeddingUpdate], size: int
) -> Iterator[tuple[list[EntityEmbeddingUpdate], list[RelationEmbeddingUpdate]]]:
    """The entities `size` at a time, then the relations."""
    for i in range(0, len(ents), size):
        yield ents[i : i + size], []
    for i in range(0, len(rels), size):
        yield [], rels[i : i + size]
