"""Retroactive resolution: earlier nodes a processed document shows to be aliases of its full names.

A document naming only "Dr. Okafor" may be ingested before the one naming "Ngozi Okafor"; when the full name
arrives and exactly one entity of the project fits the short form (app/domain/cross_document.py), the short
node is merged into the full one by the curation merge (services/graph/entity_merge.py, strategy concatenate:
its relations, provenance and description fragments move, no LLM call), the alias keeps the rule that found
it and the ledger records which names, which rule and which document. Resolution then no longer depends on
the order the documents came in.

The pass runs after the document's merge has committed, on what is committed then (`final_pass`), both ways:
this document's full names absorb earlier short nodes, and this document's short nodes join a full name that
exists now. Two documents processed at the same time may each resolve before the other commits; the one
committing last sees both in its final pass. A document retried after its merge committed runs the pass again,
so no absorption is lost with the attempt that computed it.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from contextlib import asynccontextmanager

from sqlalchemy.ext.asyncio import AsyncConnection

from app.container import Container
from app.core.errors import AppError
from app.db.engine import Database
from app.domain.absorption import (
    Absorption,
    absorbs,
    absorptions,
    ambiguous_initials,
    contradicted,
    initials_keys,
    lone_fit,
    related_forms,
)
from app.domain.aliases import AliasItem, AliasSource
from app.domain.chunk_records import as_merged
from app.domain.cross_document import Ranges, lone_word_candidates, nearby_ranges
from app.domain.name_index import NameIndex, Nearby
from app.domain.name_matching import initials_pattern, is_person, types_compatible
from app.domain.name_variants import root_of, surname_of, written_ends
from app.domain.names import sorted_pair
from app.domain.state_abbreviations import foreign_reading
from app.repositories import aliases as alias_repo
from app.repositories import chunk_records as records_repo
from app.repositories import contradicted_merges as contradicted_repo
from app.repositories import final_pass_reads as passes_repo
from app.repositories import graph as graph_repo
from app.repositories import resolution_ledger as ledger_repo
from app.repositories.final_pass_reads import DocumentReading, NearReading
from app.repositories.resolution_ledger import LedgerItem, NearAlias, ShortFormMerge
from app.schemas.graph import MergeRequest
from app.services.graph.entity_merge import EntityMergeService

log = logging.getLogger(__name__)

UndoMerge = Callable[[str, ShortFormMerge], Awaitable[None]]  # (project id, the ledger entry to undo)


def through_aliases(mine: Nearby, others: Nearby, aliases: dict[str, NearAlias]) -> list[Absorption]:
    """The document's short nodes that fit a name which is now only an alias of an entity: "Terralink" alone
    fits "Terralink X7", absorbed earlier into "Pellucid Terralink X7", so it joins that entity (in the other
    order it would have joined "Terralink X7" before that was absorbed)."""
    names: Nearby = {k: (a.name, a.entity_type) for k, a in aliases.items() if k not in mine and k not in others}
    out: list[Absorption] = []
    for a in absorptions(others | names, mine, set()) if names else []:
        alias = aliases.get(a.target)
        if a.target not in names or alias is None or alias.entity_key == a.key:
            continue
        evidence = f"{a.evidence}, an alias of {alias.entity_name!r}"
        out.append(Absorption(a.key, a.name, alias.entity_key, alias.entity_name, a.rule, evidence))
    return out


_SOURCE: dict[str, AliasSource] = {"partial": "partial", "acronym": "acronym"}  # other rules: "rule"


def _across_documents(m: ShortFormMerge, targets: Nearby) -> bool:
    """Whether `ambiguous_now` asks about the merge: a short form joined across documents into one of `targets`."""
    return m.entity_key in targets and (m.retroactive or m.evidence.endswith(f"({m.rule})"))


def ambiguous_now(names: Nearby, merges: list[ShortFormMerge], targets: Nearby) -> list[ShortFormMerge]:
    """The merges (of a short form across documents, into one of `targets`) whose short form now fits another
    entity among `names` (this document's and the project's near it) as well. A short form joined by evidence
    inside its own document ("Okafor" in a text naming "Ngozi Okafor") stays: the ledger tells those apart by
    their evidence (app/domain/resolution.py)."""
    out = []
    indexes: dict[str, NameIndex] = {}  # one per entity, not per merge: an entity may have many short forms
    for m in merges:
        if not _across_documents(m, targets):
            continue
        target_type = targets[m.entity_key][1]
        if (index := indexes.get(m.entity_key)) is None:
            index = indexes[m.entity_key] = NameIndex(names | {m.entity_key: targets[m.entity_key]})
        fits, _ = lone_word_candidates(m.merged_name, target_type, index, exclude=m.merged_key)
        if m.entity_key in fits and len(fits) >= 2:
            out.append(m)
    return out


def _short_words(mine: Nearby) -> list[str]:
    """The surnames (people) and roots (other things) of the document's names: the short forms whose standing
    merges its names may make ambiguous."""
    words = set()
    for name, etype in mine.values():
        if (word := surname_of(name) if is_person(etype) else root_of(name, etype)) is not None:
            words.add(word)
        words.update(written_ends(name, etype))  # "smith-jones" as written: no ledger row ends with " jones" for it
    return sorted(words)


def _defined_here(reading: DocumentReading) -> tuple[list[Absorption], list[str]]:
    """Earlier nodes of an acronym this document defines ("MRI", before a document wrote "magnetic resonance
    imaging (MRI)"), when no document of the project defines it otherwise: the order the other way round records
    the definition as the acronym's alias, and later uses follow it. And the acronyms it defines that another
    document does otherwise."""
    mine, here, everywhere = reading.mine, reading.here, reading.everywhere
    contested = sorted(k for k in here if len(everywhere.get(k, ())) > 1)
    out = []
    for key, (name, etype) in sorted(reading.acronym_nodes.items()):
        target = here[key]
        if everywhere.get(key) != {target} or target not in mine or key == target:
            continue
        if not types_compatible(etype, mine[target][1]):
            continue
        target_name = mine[target][0]
        evidence = f"the document defines {name} as {target_name!r}, its only definition in the project"
        out.append(Absorption(key, name, target, target_name, "acronym", evidence))
    return out, contested


def _initials_keys(mine: Nearby) -> list[str]:
    """The acronym keys the document's names have initials for: the merges `initials_now_ambiguous` asks about."""
    return sorted({k for name, etype in mine.values() for k in initials_keys(name, etype)})


async def _readings(
    conn: AsyncConnection, project_id: str, document_id: str, expected: Nearby | None, with_words: bool
) -> tuple[DocumentReading, NearReading]:
    """The document's nodes and what lies near them. With the nodes `expected`, both in one statement, asked for
    what lies near the expected ones; read again only if the nodes read ask for something else (another
    document's absorption took one meanwhile, say), so the pass always works on what its own nodes ask for.
    `with_words`: also the standing short-form merges of the nodes' short words and the standing merges by
    initials alone of the acronyms their initials spell (the undo checks' readings)."""

    def asked(mine: Nearby) -> tuple[Ranges, list[str], list[str] | None]:
        if not with_words:
            return nearby_ranges(list(mine.values())), [], None
        return nearby_ranges(list(mine.values())), _short_words(mine), _initials_keys(mine)

    if expected is None:
        reading = await passes_repo.document_reading(conn, project_id, document_id)
        return reading, await passes_repo.near_reading(conn, project_id, *asked(reading.mine))
    guess = asked(expected)
    reading, near = await passes_repo.document_and_near(conn, project_id, document_id, *guess)
    if reading.mine != expected and (actual := asked(reading.mine)) != guess:
        near = await passes_repo.near_reading(conn, project_id, *actual)
    return reading, near


@asynccontextmanager
async def _reads(db: Database) -> AsyncIterator[AsyncConnection]:
    """A connection for the pass's reads without a transaction around them: each statement takes its own
    snapshot, as it does in a READ COMMITTED transaction, and the BEGIN and ROLLBACK round trips are saved
    (every document runs the pass)."""
    async with db.connect() as conn:
        yield await conn.execution_options(isolation_level="AUTOCOMMIT")


class Absorber:
    def __init__(self, c: Container) -> None:
        self.db = c.db
        self.merges = EntityMergeService(c)

    async def review(
        self,
        project_id: str,
        document_id: str,
        undo: UndoMerge | None,
        expected: Nearby | None = None,
        related: Collection[tuple[str, str]] | None = (),
    ) -> None:
        """The final pass over the document's committed nodes, its absorptions made, then `undo` called for each
        standing short-form merge the document makes ambiguous (none checked without `undo`), for each merge
        of an undefined use of an acronym the document defines otherwise than another document does, and for
        each merge that joined two writings of a person's name the document relates to each other (`related`,
        absorption.py::related_forms; None when the extractions are not in hand, as on a retry after the merge
        committed: then read from the document's stored records). One statement reads all of it when the pass
        finds nothing to absorb and the nodes are the `expected` ones (as the merge wrote them), as for most
        documents (repositories/final_pass_reads.py); the related forms, when there are some, one more (and on
        such a retry, one for the stored records); the standing merges the undo checks ask about (of the nodes'
        short words and of the acronyms their initials spell) come with it when the nodes stay as read."""
        async with _reads(self.db) as conn:
            reading, near = await _readings(conn, project_id, document_id, expected, undo is not None)
            mine = reading.mine
            found, contested = await self.final_pass(conn, project_id, reading, near)
            ambiguous = initials = None
            if undo is not None and not found:  # the nodes stay as read: the undo checks' readings are in hand
                ambiguous = await self._ambiguous(conn, project_id, mine, near.merges, near.targets)
                if near.initials is not None:
                    initials = ambiguous_initials(mine, near.initials, near.initials_targets) if near.initials else []
        merged = await self.absorb(project_id, document_id, found)
        undefined = await self.contest(project_id, contested)
        if undo is None:
            return
        if ambiguous is None or initials is None:
            async with _reads(self.db) as conn:
                if ambiguous is None:  # the nodes read again only when the pass merged some away
                    if merged:
                        mine = await ledger_repo.document_nodes(conn, project_id, document_id)
                    ambiguous = await self.now_ambiguous(conn, project_id, mine)
                if initials is None:
                    initials = await self.initials_now_ambiguous(conn, project_id, mine)
        undone: set[int] = set()
        for merge in ambiguous + undefined + initials + await self.contradicted(project_id, document_id, related):
            if merge.id not in undone:
                undone.add(merge.id)
                await undo(project_id, merge)

    async def initials_now_ambiguous(
        self, conn: AsyncConnection, project_id: str, mine: Nearby
    ) -> list[ShortFormMerge]:
        """Standing merges of an acronym joined across documents by its initials alone that one of the document's
        names (`mine`) fits as well (absorption.py `ambiguous_initials`): no read when no name has initials, one
        when no such merge stands, two when some do."""
        keys = _initials_keys(mine)
        if not keys:
            return []
        merges = await ledger_repo.initials_merges(conn, project_id, keys)
        if not merges:
            return []
        wanted = sorted({m.entity_key for m in merges})
        stored = await graph_repo.fetch_entities(conn, project_id, wanted, with_sources=False)
        return ambiguous_initials(mine, merges, {k: (r.name, r.entity_type) for k, r in stored.items()})

    async def contradicted(
        self, project_id: str, document_id: str, related: Collection[tuple[str, str]] | None
    ) -> list[ShortFormMerge]:
        """The standing merges that joined two names the document relates to each other as two people ("Robert
        Everly" merged into "Bob Everly" by documents naming each alone): had this document come first, the
        names would have stayed apart (app/domain/resolution.py), so the caller undoes them. `related` None: an
        earlier attempt merged the document and ended before this undo (a failure, a crash, a claim retaken),
        so its relations are read back from its stored records, no extraction call; a standing merge is one
        not undone yet, so an undo the earlier attempt finished is not done twice."""
        if related is not None and not related:
            return []
        async with _reads(self.db) as conn:
            if related is None:
                stored = await records_repo.of_document(conn, project_id, document_id)
                related = related_forms([x for cid, path, rec in stored if (x := as_merged(rec, cid, path))])
            if not related:
                return []
            merges = await contradicted_repo.standing_merges_of(
                conn, project_id, sorted({k for p in related for k in p})
            )
        return contradicted(related, merges)

    async def contest(self, project_id: str, acronyms: list[str]) -> list[ShortFormMerge]:
        """For acronyms two documents define as two entities ("FRC": a commission here, a railway there): their
        definitions become aliases scoped to the documents that wrote them, so a use that does not say what it
        stands for follows neither; returns the standing merges of such uses (a followed alias, fitting
        initials, an absorption while one definition was the project's only one) for the caller to undo, as
        in another order they would have stayed apart."""
        if not acronyms:
            return []
        async with self.db.transaction() as conn:
            await graph_repo.lock_keys(conn, project_id, acronyms)
            await alias_repo.scope_definitions(conn, project_id, acronyms)
            return await ledger_repo.undefined_uses(conn, project_id, acronyms)

    async def final_pass(
        self, conn: AsyncConnection, project_id: str, reading: DocumentReading, read_near: NearReading
    ) -> tuple[list[Absorption], list[str]]:
        """The absorptions the committed graph shows for the document's nodes (`reading.mine`), in either
        direction, without pairs a user rejected and acronyms whose initials fit another entity of the project;
        and the acronyms the document defines that another document defines as another entity."""
        mine = reading.mine
        near, aliases = read_near.near, read_near.aliases
        others = {k: v for k, v in near.items() if k not in mine}
        everyone = others | mine
        index = NameIndex(everyone)  # every call below reads the same names: indexed once
        found = absorptions(mine, others, set(), index)
        # the document's nodes, each fitting one name among all the project's (asked once for both uses below)
        fits = [a for key in sorted(mine) if (a := lone_fit(key, *mine[key], everyone, index)) is not None]
        found += [a for a in fits if absorbs(a, others)]  # earlier full names absorbing this document's short nodes
        # and between the document's own nodes: a short node of an earlier document this one's short form
        # resolved to ("Terralink X7") may be an alias of a longer name it brings ("Pellucid Terralink X7"), and
        # a dotted acronym node ("N.C.") an earlier document made, named again beside its full name
        found += [
            a for a in fits if absorbs(a, mine) and (a.rule != "acronym" or "." in a.name) and a.rule != "partial"
        ]
        found += through_aliases(mine, others, aliases)
        defined, contested = _defined_here(reading)
        rejected = await alias_repo.rejected_pairs(conn, project_id, [(a.key, a.target) for a in found + defined])
        kept = [a for a in defined if sorted_pair(a.key, a.target) not in rejected]
        for a in found:
            if sorted_pair(a.key, a.target) in rejected:
                continue
            if a.rule == "acronym":  # another entity of a fitting type with those initials: ambiguous (as at ingest)
                pattern, first = initials_pattern(a.name)
                initialled = await alias_repo.keys_by_prefix(conn, project_id, pattern, first.lower())
                etype = everyone[a.key][1]
                fitting = {k for k, t in initialled if types_compatible(etype, t) and not foreign_reading(a.name, k)}
                if fitting - {a.key, a.target}:
                    continue
            kept.append(a)
        return kept, contested

    async def now_ambiguous(self, conn: AsyncConnection, project_id: str, mine: Nearby) -> list[ShortFormMerge]:
        """Standing merges of a short form across documents that the document's names (`mine`) make ambiguous:
        "Dr. Okafor" joined "Ngozi Okafor" while she was the only Okafor, and this document names "Chidi Okafor".
        Had the documents come in another order, the short form would have been kept apart: the caller undoes
        them."""
        merges = await ledger_repo.short_form_merges(conn, project_id, _short_words(mine))
        if not merges:
            return []
        stored = await graph_repo.fetch_entities(
            conn, project_id, sorted({m.entity_key for m in merges}), with_sources=False
        )
        targets: Nearby = {k: (r.name, r.entity_type) for k, r in stored.items()}
        return await self._ambiguous(conn, project_id, mine, merges, targets)

    async def _ambiguous(
        self, conn: AsyncConnection, project_id: str, mine: Nearby, merges: list[ShortFormMerge], targets: Nearby
    ) -> list[ShortFormMerge]:
        """`now_ambiguous` on the standing merges of the document's short words and their entities (`targets`)."""
        if not any(_across_documents(m, targets) for m in merges):  # nothing `ambiguous_now` would ask about
            return []
        # every entity of the project the short forms fit, not only this document's: a document resolving at
        # the same time as the second full name's may commit after that one's pass
        ranges = nearby_ranges([(m.merged_name, targets[m.entity_key][1]) for m in merges if m.entity_key in targets])
        near = await ledger_repo.entities_near(conn, project_id, ranges)
        return ambiguous_now(near | mine, merges, targets)

    async def absorb(self, project_id: str, document_id: str, absorptions: list[Absorption]) -> int:
        """Merge each earlier node into its full name; returns the merges made (a node gone meanwhile, or
        a merge refused, is skipped and logged)."""
        done = 0
        for a in absorptions:
            try:
                await self.merges.merge(
                    MergeRequest(
                        project_id=project_id,
                        source_entities=[a.name],
                        target_entity=a.target_name,
                        strategy="concatenate",
                    ),
                    by_hand=False,
                )
            except AppError as exc:
                log.info("retroactive merge of %r into %r skipped: %s", a.name, a.target_name, exc)
                continue
            async with self.db.transaction() as conn:
                await graph_repo.lock_keys(conn, project_id, [a.key, a.target])
                await alias_repo.add_aliases(
                    conn,
                    project_id,
                    a.target,
                    [AliasItem(a.key, a.name, _SOURCE.get(a.rule, "rule"), document_id)],
                    overwrite=True,
                )
                await ledger_repo.add(
                    conn,
                    project_id,
                    [LedgerItem(a.target, a.key, a.name, a.rule, a.evidence, document_id, retroactive=True)],
                )
            done += 1
        return done
