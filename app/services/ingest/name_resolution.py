"""Entity resolution inside the merge transaction (ENTITY_RESOLUTION): the document's names are matched
against the project's entities and aliases (app/domain/resolution.py) under the key locks of the names,
their match keys and their targets, so two documents introducing forms of one entity end with one node.

The targets are read once without locks to choose the lock set; if, under the locks, a name resolves to
a key outside them, the transaction is rolled back and retried with that key (`Relock`), as locks are only
taken all at once, in one order.

Deciding is the costly part, and a merge on hub entities holds their locks while it decides, so every other
document waits. The decision is therefore taken once before the locks (`anticipate`); under them only what
it was taken on is read again, and the decision is reused if that reading is the same, else taken again.
`resolve` is a pure function of that reading, so the outcome is the one a decision under the locks gives.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sqlalchemy.ext.asyncio import AsyncConnection

from app.domain.aliases import AliasItem, SuggestionItem
from app.domain.cross_document import Ranges, nearby_ranges
from app.domain.document_names import DocumentNames, document_names, remap
from app.domain.document_rows import HeldClaim
from app.domain.judge import JudgePair, one_line
from app.domain.judge_candidates import Proposal, with_proposals
from app.domain.name_codes import code_definitions
from app.domain.name_matching import (
    acronym_letters,
    defined_acronyms,
    initials_pattern,
    is_acronym,
)
from app.domain.name_variants import confusable
from app.domain.names import sorted_pair
from app.domain.records import ChunkExtraction
from app.domain.resolution import (
    Decision,
    Known,
    Resolution,
    ResolutionMode,
    index_key,
    index_lookups,
    lookup_keys,
    qualified_keys,
    resolve,
)
from app.repositories import aliases as aliases_repo
from app.repositories import graph as graph_repo
from app.repositories import resolution_ledger as ledger_repo
from app.repositories.resolution_ledger import LedgerItem, Recorded
from app.repositories.resolution_reads import Initials, decision_reading
from app.services.ingest.lock_guess import KnownKeys


class Relock(Exception):
    """Names resolve to keys outside the locks taken: retry the transaction with them."""


def _reading(known: Known, rejected: set[tuple[str, str]]) -> tuple:
    """What a decision is taken on. Not the order the rows came back in: it follows where rows lie on disk
    (updated rows move), and the rules ask "which ones fit, exactly one?" of what was read."""
    return (
        dict(known.entity_types),
        dict(known.aliases),
        {k: sorted(v) for k, v in known.initials.items()},
        dict(known.nearby),
        set(known.defined),
        set(rejected),
    )


@dataclass(frozen=True)
class _Asked:
    """What every reading of a document's names asks for (they do not change between readings)."""

    alias_keys: set[str]
    type_keys: set[str]
    acronyms: dict[str, Initials]  # the document's undefined acronyms (letters) → their initials' read
    ranges: Ranges
    undefined: dict[str, set[str]]  # undefined acronym name key → the keys an alias of it is read under
    lookups: set[str]  # lookup_keys: the names, their match keys and defined expansions
    qualified: dict[str, str]  # qualified_keys: name key → its qualified form's key


@dataclass(frozen=True)
class _Anticipated:
    """A decision taken before the locks and the reading it was taken on."""

    reading: tuple
    result: Resolution


@dataclass
class NameResolution:
    mode: ResolutionMode
    project_id: str
    document_id: str
    doc: DocumentNames
    definitions: dict[str, str]
    defined: set[str] = field(default_factory=set)  # acronyms the document defines in any form
    lock_keys: set[str] = field(default_factory=set)
    result: Resolution | None = None
    rejected: set[tuple[str, str]] = field(default_factory=set)  # rejected pairs touching the document's names
    descriptions: dict[str, str] = field(default_factory=dict)  # the document's first description of each name
    judged: dict[str, tuple[str, str]] = field(default_factory=dict)  # name key → (entity key, reason): judge said same
    settled: bool = False  # the judge was asked (or had nothing to answer)
    proposed: dict[str, Proposal] = field(default_factory=dict)  # name key → a neighbour the judge said is it
    anticipated: _Anticipated | None = None  # the decision taken before the locks (`anticipate`)
    reused: bool = False  # the last `resolve_locked` reused it
    aliases_read: dict[str, str] = field(default_factory=dict)  # the last reading's aliases (name key → entity)
    guess: KnownKeys | None = None  # what the process has seen of the project, learning from each reading
    guessed: bool = False  # `lock_keys` guessed from `guess`: nothing read before the locks yet
    _asked: _Asked | None = None
    _prepared: Known | None = None  # the reading `prepare` took, for `anticipate` when no judge ran between

    @classmethod
    async def prepare(
        cls,
        conn: AsyncConnection | None,
        mode: ResolutionMode,
        project_id: str,
        document_id: str,
        extractions: list[ChunkExtraction],
        chunk_texts: list[str] | None = None,
        guess: KnownKeys | None = None,
    ) -> NameResolution:
        """`chunk_texts`: the document's chunk texts in order when the caller holds them (the pipeline just stored
        them), else they are read when an acronym asks for its definitions. With `guess` (and no judge to ask),
        nothing is read before the locks: they are guessed from it (`guessed`), and the one reading is under them."""
        doc = document_names(extractions)
        definitions: dict[str, str] = {}
        defined: set[str] = set()
        if any(is_acronym(n) for n in doc.names.values()):
            if chunk_texts is None:
                assert conn is not None, "the chunk texts to read"
                chunk_texts = await aliases_repo.document_texts(conn, project_id, document_id)
            texts = list(chunk_texts)
            texts += [e.description for x in extractions for e in x.entities] + list(doc.names.values())
            definitions = code_definitions(texts, doc.names.values())
            defined = defined_acronyms(texts)
        self = cls(mode, project_id, document_id, doc, definitions, defined)
        for x in extractions:
            for e in x.entities:
                if e.description and e.key not in self.descriptions:
                    self.descriptions[e.key] = e.description
        if guess is not None and mode != "llm":
            self.guess, self.guessed = guess, True
            asked = self._ask()
            self.lock_keys = (
                asked.lookups
                | set(asked.qualified.values())
                | {t for k in asked.alias_keys if (t := guess.aliases.get(k)) is not None}
                | {k for letters in asked.acronyms for k in guess.initials.get(letters, ())}
                | guess.near(asked.ranges)
            )
            return self
        assert conn is not None, "a reading to take"
        known = self._prepared = await self._known(conn)
        self.lock_keys = self._named(known)
        return self

    def _named(self, known: Known) -> set[str]:
        """The keys a reading names, which its decision is taken under the locks of."""
        asked = self._ask()
        return (
            set(asked.lookups)
            | set(known.aliases.values())
            | {k for keys in known.initials.values() for k in keys}
            | set(known.nearby)
            | {q for k, q in asked.qualified.items() if k in known.entity_types or q in known.entity_types}
        )

    async def _known(self, conn: AsyncConnection) -> Known:
        return (await self._read(conn))[0]

    async def _read(self, conn: AsyncConnection, worker_id: str | None = None) -> tuple[Known, HeldClaim | None]:
        """Aliases, entity types, nearby entities, entities fitting undefined acronyms' initials and rejected
        pairs of the document's names as stored now, in one statement; the rejected pairs are kept for
        `_drop_rejected`, and the aliases read are kept for `record`. With `worker_id`, also the document's
        claim, checked and its row locked in the same statement."""
        asked = self._ask()
        proposed = {p.target for p in self.proposed.values()}  # whether the judge's picks still exist
        reading = await decision_reading(
            conn,
            self.project_id,
            self.document_id,
            asked.alias_keys | proposed,
            asked.type_keys | proposed,
            self.doc.names,
            asked.ranges,
            list(asked.acronyms.values()),
            {k for key, keys in asked.undefined.items() for k in (key, self.doc.match(key))},
            worker_id,
        )
        if self.guess is not None:  # what exists now, for the next documents' guesses
            self.guess.learn(reading.types)
            self.guess.learn(reading.nearby)
            self.guess.learn_aliases(reading.aliases)
        self.rejected = reading.rejected
        types = reading.types
        initials: dict[str, list[str]] = {}
        for letters, found in zip(asked.acronyms, reading.by_initials, strict=True):
            initials[letters] = [k for k, _ in found]
            types.update(found)
        if self.guess is not None:
            self.guess.initials.update(initials)
        # an acronym documents define two ways is ambiguous where it stands undefined: no alias of it is followed
        contested = {
            k
            for key, keys in asked.undefined.items()
            if len(reading.defined_as.get(key, set()) | reading.defined_as.get(self.doc.match(key), set())) > 1
            for k in keys
        }
        aliases = self.aliases_read = {k: e for k, e in reading.aliases.items() if k not in contested}
        return Known(types, aliases, initials, reading.nearby, self.defined), reading.claim

    def _ask(self) -> _Asked:
        """What every reading of the document's names asks for (the names do not change: worked out once)."""
        if self._asked is None:
            lookups, qualified = lookup_keys(self.doc, self.definitions), qualified_keys(self.doc)
            keys = lookups | set(qualified.values())
            acronyms: dict[str, Initials] = {}
            undefined: dict[str, set[str]] = {}
            for key, name in self.doc.names.items():
                letters = acronym_letters(name)
                if is_acronym(name) and letters not in self.defined | set(self.definitions):
                    match = self.doc.match(key)
                    undefined[key] = {key, match, index_key(match)}
                    if letters not in acronyms:
                        pattern, first = initials_pattern(letters)
                        acronyms[letters] = Initials(pattern, first.lower())
            ranges = nearby_ranges([(name, self.doc.types.get(key, "unknown")) for key, name in self.doc.names.items()])
            alias_keys = keys | index_lookups(self.doc, self.definitions)
            self._asked = _Asked(alias_keys, keys, acronyms, ranges, undefined, lookups, qualified)
        return self._asked

    async def rules_only(self, conn: AsyncConnection) -> tuple[Known, Resolution]:
        """The reading as the project stands now and what the rules alone decide on it (no judge's verdicts):
        what the judge's pairs are drawn from."""
        known = await self._known(conn)
        return known, resolve(self.doc, known, self.definitions, self.mode)

    async def open_pairs(self, conn: AsyncConnection, result: Resolution) -> list[JudgePair]:
        """The pairs the rules (`result`, from `rules_only`) leave open as the project stands now (no locks: the
        verdicts are applied under them only to names still open, app/domain/resolution.py), without those the
        guard or a user keeps apart."""
        wanted = sorted({k for found in result.open.values() for k in found if k not in self.doc.names})
        stored = await graph_repo.fetch_entities(conn, self.project_id, wanted, with_sources=False)
        pairs = []
        for key, found in sorted(result.open.items()):
            name, etype = self.doc.names[key], self.doc.types.get(key, "unknown")
            for other in sorted(found):
                if other in self.doc.names:
                    other_name, other_type = self.doc.names[other], self.doc.types.get(other, "unknown")
                    other_description = self.descriptions.get(other, "")
                elif other in stored:
                    row = stored[other]
                    other_name, other_type, other_description = row.name, row.entity_type, row.description
                else:
                    continue
                if confusable(name, etype, other_name, other_type) or sorted_pair(key, other) in self.rejected:
                    continue
                pairs.append(
                    JudgePair(
                        key,
                        name,
                        etype,
                        one_line(self.descriptions.get(key, "")),
                        other,
                        other_name,
                        other_type,
                        one_line(other_description),
                    )
                )
        return pairs

    @property
    def reads_ahead(self) -> bool:
        """Whether `anticipate` reads (it needs a connection)."""
        return not self.guessed and (self._prepared is None or self.mode == "llm")

    async def anticipate(self, conn: AsyncConnection | None) -> None:
        """Decide without locks (after the judge, whose verdicts are part of the decision), to be reused under
        them if what it was taken on is unchanged; the lock set grows by the targets it chose, which would
        otherwise cost a `Relock` round."""
        # straight after `prepare` (no judge call between) its reading is as fresh as a new one would be
        known, self._prepared = self._prepared, None
        if self.guessed:  # nothing read: the decision is taken on the reading under the locks
            return
        if known is None or self.mode == "llm":
            assert conn is not None, "a reading to take"
            known = await self._known(conn)
        result = self._decide(known)
        self.anticipated = _Anticipated(_reading(known, self.rejected), result)
        self.lock_keys |= {d.target for d in result.decisions.values()} | set(result.index.values())

    async def resolve_locked(self, conn: AsyncConnection) -> None:
        """Decide under the locks of `lock_keys`; raises Relock if a target lies outside them."""
        self.decide_locked(await self._known(conn))

    async def read_locked(self, conn: AsyncConnection, worker_id: str) -> tuple[HeldClaim | None, Known]:
        """Under the locks of `lock_keys`: the document's claim (as documents.lock_claim reads it, its row locked if
        `worker_id` still holds it) and the reading to decide on (`decide_locked`), in one statement."""
        known, claim = await self._read(conn, worker_id)
        return claim, known

    def decide_locked(self, known: Known) -> None:
        """Decide on `known`, read under the locks of `lock_keys`; raises Relock if a target lies outside them."""
        ahead = self.anticipated
        self.reused = ahead is not None and ahead.reading == _reading(known, self.rejected)
        if ahead is not None and self.reused:  # `_drop_rejected` edits the decisions: a copy of them
            self.result = replace(ahead.result, decisions=dict(ahead.result.decisions))
        else:
            self.result = self._decide(known)
        self._drop_rejected()
        targets = {d.target for d in self.result.decisions.values()} | set(self.result.index.values())
        if self.guessed:  # locks guessed: everything the reading names must be locked, or it is a reading before
            self.guessed = False  # them, and the retry decides under the locks it names, as `prepare` would have
            if not (named := self._named(known) | targets) <= self.lock_keys:
                self.lock_keys |= named
                self._prepared = known
                raise Relock
        if not targets <= self.lock_keys:
            self.lock_keys |= targets
            raise Relock

    def _decide(self, known: Known) -> Resolution:
        result = resolve(self.doc, known, self.definitions, self.mode, self.judged)
        return with_proposals(result, self.doc, self.proposed, known.entity_types) if self.proposed else result

    def _drop_rejected(self) -> None:
        """A pair a user rejected or an alias they detached (both recorded in entity_rejections) stays apart:
        the name keeps its own node however well the rules match (a name kept apart already is)."""
        assert self.result is not None
        applied = [(key, d.target) for key, d in self.result.decisions.items() if d.target != key and not d.apart]
        for key, target in applied:
            if sorted_pair(key, target) in self.rejected:
                self.result.decisions[key] = Decision(key)

    def apply(self, extractions: list[ChunkExtraction]) -> list[ChunkExtraction]:
        assert self.result is not None
        targets = {k: d.target for k, d in self.result.decisions.items() if d.target != k}
        return remap(extractions, targets, self.result.display) if targets else extractions

    async def record(self, conn: AsyncConnection) -> None:
        """Write the new aliases, the match-key index entries and the suggestions."""
        recorded = self.recorded()
        await ledger_repo.add_with_aliases(conn, self.project_id, recorded.aliases, recorded.items)
        await self.suggest(conn)

    def recorded(self) -> Recorded:
        """The new aliases, the match-key index entries and the ledger entries, for the merge to write."""
        assert self.result is not None
        by_target: dict[str, list[AliasItem]] = {}
        for key, decision in self.result.decisions.items():
            # an alias followed as it stands is not written again: that would only make it this document's,
            # and an acronym's definition would no longer read as the defining document's (absorb.py)
            followed = not decision.scoped and self.aliases_read.get(key) == decision.target
            if decision.target != key and decision.source is not None and not followed:
                by_target.setdefault(decision.target, []).append(
                    AliasItem(key, self.doc.names[key], decision.source, self.document_id, decision.scoped)
                )
        for ikey, target in self.result.index.items():
            by_target.setdefault(target, []).append(
                AliasItem(ikey, self.doc.names.get(target, target), "rule", self.document_id)
            )
        items = [
            LedgerItem(d.target, key, self.doc.names[key], d.rule or d.source, d.evidence, self.document_id)
            for key, d in sorted(self.result.decisions.items())
            if d.target != key and d.source is not None and not d.apart
        ]
        return Recorded(by_target, items)

    async def suggest(self, conn: AsyncConnection) -> None:
        """Write the suggestions."""
        assert self.result is not None
        if self.result.suggestions:
            await aliases_repo.add_suggestions(
                conn,
                self.project_id,
                [SuggestionItem(a, b, score, evidence) for a, b, score, evidence in self.result.suggestions],
            )
