"""Candidates for the LLM judge beyond the rules (ENTITY_RESOLUTION=llm), pure part: which stored entities a
new name of the document may stand for when no rule relates them ("Burma" / "Myanmar", "DEU" / "Germany"),
and how the judge's "same" on one of them becomes a decision.

The neighbours come from the database (app/repositories/name_neighbours.py: the entities whose name and
description embeddings are at least ENTITY_JUDGE_SIMILARITY alike to the name's, names of close trigram
similarity where pg_trgm is installed, and a bare code and the names holding its letters in order, "LBN" /
"Lebanon"). Each is checked here before the judge sees it: a type compatible with the name's, not a pair the
confusable guard or a user keeps apart.

Whether a pair is asked depends on the pair alone, never on its rank among what happens to be stored: "B is
among A's two nearest" holds when A's document comes last and may not when B's does, so the nodes depended on
the order of ingestion. The similarity of the two names' embeddings is the same whichever side is stored, so
the same pairs pass in either order. Every pair that passes is asked, up to a ceiling (`per_document`) set
far above what a document usually has (the holdout's documents have at most 13): a cap near the usual count
(it was 12) bound in one order and not in the other, for what competes in a document depends on what is stored
before it. The ceiling only bounds the tokens of one call on a document naming very many things; it takes the
pairs in the order of their unordered pair of keys, which a pair has whichever side is the document's and
whatever was stored when it came (a similarity does not: the stored side's embedding is of its description as
merged by then, the document's side of its own first one). The pairs over it are not dropped: they are kept
as duplicate suggestions ("not asked: over the judge's per-document cap", `unasked_evidence`) and counted in
the document's report (app/services/ingest/resolution_judge.py). Two names of people must also
share something an alias of one person keeps (`may_be_one_person`): the embeddings of two names of one style
("Haoran Xu" / "Haoran Zhou") are near whoever they name, and a judge may say "same" to them.

A verdict is applied only to a name the rules still leave as a node of its own, only when the entity is still
there as the merge reads it under the locks, and the guard is asked again: no answer joins what it keeps apart.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from app.domain.document_names import DocumentNames
from app.domain.name_matching import GENERATIONS, acronym_letters, is_acronym, is_person, tokens, types_compatible
from app.domain.name_spellings import phonetic_key
from app.domain.name_variants import confusable
from app.domain.names import sorted_pair
from app.domain.resolution import Decision, Resolution

CODE_FIT = 0.5  # the place of a neighbour found by a code's letters alone, among embedding similarities
# Pairs shown to the judge per document at most, a hard token ceiling: a pair costs the prompt at most ~90
# tokens (a pair line, two name lines of a one-line description cut at 120 characters) and the answer ~20, so
# ~3,500 tokens in all; usually far less (a name in several pairs is listed once, most pairs are fewer).
PER_DOCUMENT = 32
# How much less alike a pair with a bare code ("UGX" / "Uganda Shilling") may be: the code's side of the embedding
# is nearly all description (a model knows few codes), so even its own name's reads as weakly near.
CODE_MARGIN = 0.05


@dataclass(frozen=True)
class Neighbour:
    """A stored entity near one of the document's names (`name_key`), with how it was found."""

    name_key: str
    key: str
    name: str
    entity_type: str
    description: str
    similarity: float
    found_by: str  # "embedding" | "trigram" | "letters" | "document" (another new name of the document)


@dataclass(frozen=True)
class Proposal:
    """The judge found the name to be this entity (its name and type kept for the guard under the locks)."""

    target: str
    name: str
    entity_type: str
    reason: str


def _family(name: str, words: list[str]) -> str:
    """What a person's name after the given name sounds like ("kouznetsov" and "kuznetsov" alike), else as written."""
    key = phonetic_key(name, "person")
    return key.rsplit(" ", 1)[1] if key else " ".join(words[1:])


def may_be_one_person(a: str, a_type: str, b: str, b_type: str) -> bool:
    """Whether two names, either of a person, share what aliases of one person almost always do: the surname
    (folded, or one transliterated: "Evgeny Kouznetsov" / "Yevgeny Kuznetsov"; "Bill Hale" / "William Hale"; a
    surname alone, "Okafor"), or the given name with the surname's initial ("Haoran Z." / "Haoran Zhou"), and
    no two generations ("Sr." / "Jr."). True for names of no person: nothing to ask of them here."""
    if not (is_person(a_type) or is_person(b_type)):
        return True
    wa, wb = tokens(a, "person"), tokens(b, "person")
    ga, gb = (w[-1] if len(w) > 1 and w[-1] in GENERATIONS else "" for w in (wa, wb))
    if ga and gb and ga != gb:  # "Sr." / "Jr.": a father and his son
        return False
    wa, wb = wa[: len(wa) - bool(ga)], wb[: len(wb) - bool(gb)]
    if not wa or not wb:
        return False
    if len(wa) == 1 or len(wb) == 1:  # a surname alone ("Okafor"), not a given name alone
        return wa[-1] == wb[-1]
    if wa[-1] == wb[-1] or _family(a, wa) == _family(b, wb):
        return True
    sa, sb = sorted((wa[-1], wb[-1]), key=len)
    return wa[:-1] == wb[:-1] and len(sa) == 1 and sb.startswith(sa)


def code_pattern(name: str) -> str | None:
    """A LIKE pattern of a bare code's letters in order, the first letter first ("LBN" → "l%b%n%": "lebanon",
    "moldovan leu" for "MDL"), for codes of three to five capitals; None for any other name. No rule may join a
    code to a name on its letters (too many names hold any three letters), but the judge may be asked."""
    letters = acronym_letters(name) if is_acronym(name) else ""
    return "%".join(letters.lower()) + "%" if 3 <= len(letters) <= 5 and letters.isalpha() else None


def lone_names(result: Resolution, stored: Collection[str]) -> list[str]:
    """The document's names the rules leave as new nodes: no target, not kept apart, not left open to the
    judge already, not an entity of the project."""
    return [
        key
        for key, d in result.decisions.items()
        if d.target == key and not d.apart and not result.open.get(key) and key not in stored
    ]


def floor_of(name: str, other: str, floor: float) -> float:
    """The similarity from which an embedding neighbour is asked: `floor`, less CODE_MARGIN when either name is a
    bare code."""
    return floor - CODE_MARGIN if code_pattern(name) or code_pattern(other) else floor


def choose(
    found: Iterable[Neighbour],
    doc: DocumentNames,
    rejected: Collection[tuple[str, str]],
    floor: float = 0.0,
    per_document: int = PER_DOCUMENT,
) -> list[Neighbour]:
    """The neighbours asked about: `passing`, at most `per_document` of them (module docstring)."""
    return passing(found, doc, rejected, floor)[:per_document]


def passing(
    found: Iterable[Neighbour], doc: DocumentNames, rejected: Collection[tuple[str, str]], floor: float = 0.0
) -> list[Neighbour]:
    """The neighbours worth a verdict: one per (name, entity), the most similar way found, each judged on the pair
    alone (an embedding neighbour from `floor_of` the pair); in the order of the unordered pair of keys, the order
    the per-document cap takes them in."""
    best: dict[tuple[str, str], Neighbour] = {}
    for n in found:
        if n.name_key not in doc.names or n.key == n.name_key:  # a stored name of this document may be it too
            continue
        name, etype = doc.names[n.name_key], doc.types.get(n.name_key, "unknown")
        if n.found_by in ("embedding", "document") and n.similarity < floor_of(name, n.name, floor):
            continue
        if not types_compatible(etype, n.entity_type) or sorted_pair(n.name_key, n.key) in rejected:
            continue
        if confusable(name, etype, n.name, n.entity_type) or not may_be_one_person(name, etype, n.name, n.entity_type):
            continue
        pair = (n.name_key, n.key)
        if pair not in best or n.similarity > best[pair].similarity:
            best[pair] = n
    return sorted(best.values(), key=_standing)


def _standing(n: Neighbour) -> tuple[str, str]:
    """A pair's place under the cap: its names' keys, the same whichever is the document's and whatever else is
    stored (module docstring)."""
    return sorted_pair(n.name_key, n.key)


_FOUND_BY = {
    "embedding": "embeddings of name and description",
    "document": "embeddings of name and description",
    "trigram": "trigrams of the keys",
}


def unasked_evidence(n: Neighbour, per_document: int = PER_DOCUMENT) -> str:
    """The evidence of the duplicate suggestion a pair over the cap becomes."""
    way = f"{_FOUND_BY[n.found_by]} {n.similarity:.2f} similar" if n.found_by in _FOUND_BY else "a bare code's letters"
    return f"not asked: over the judge's per-document cap of {per_document} ({way})"


def document_neighbours(
    vectors: Sequence[tuple[str, Sequence[float]]],
    doc: DocumentNames,
    descriptions: Mapping[str, str],
    min_similarity: float,
) -> list[Neighbour]:
    """Pairs of the document's own new names whose embeddings are at least `min_similarity` alike: neither is
    stored, so no search finds the other, and a document naming a thing two ways ("Syria" and "Syrian Arab
    Republic") would keep both, or join them only when the two names come in separate documents in one order.
    Each pair once: the name of the greater key is offered the other."""
    units = [(k, _unit(v)) for k, v in vectors]
    found: list[Neighbour] = []
    for i, (a, va) in enumerate(units):
        for b, vb in units[:i]:
            similarity = sum(x * y for x, y in zip(va, vb, strict=True))
            if similarity >= min_similarity and a != b:
                name_key, key = max(a, b), min(a, b)
                etype, text = doc.types.get(key, "unknown"), descriptions.get(key, "")
                found.append(Neighbour(name_key, key, doc.names[key], etype, text, similarity, "document"))
    return found


def _unit(vector: Sequence[float]) -> list[float]:
    norm = sum(x * x for x in vector) ** 0.5 or 1.0
    return [x / norm for x in vector]


def with_proposals(
    result: Resolution, doc: DocumentNames, proposed: Mapping[str, Proposal], present: Collection[str]
) -> Resolution:
    """The rules' resolution with the judge's verdicts on proposed neighbours applied (module docstring). A
    name of the document the rules resolved into a moved name follows it."""
    moved: dict[str, Decision] = {}
    for key, p in sorted(proposed.items()):
        d = result.decisions.get(key)
        if d is None or d.target != key or d.apart or p.target == key:
            continue
        if p.target not in present and p.target not in doc.names:  # gone, and not a new name of this document
            continue
        name, etype = doc.names[key], doc.types.get(key, "unknown")
        if confusable(name, etype, p.name, p.entity_type) or not may_be_one_person(name, etype, p.name, p.entity_type):
            continue
        final = result.decisions[p.target].target if p.target in result.decisions else p.target  # "Ouguiya (MRU)"
        if final != key:
            moved[key] = Decision(final, "similarity", f"LLM judge: {p.reason}", scoped=True, rule="llm_judge")
    if not moved:
        return result
    for key, d in list(moved.items()):  # into a name of this document the judge moved too: where that one went
        final, seen = d.target, {key}
        while final in moved and final not in seen:
            seen.add(final)
            final = moved[final].target
        if final in seen:  # the judge's answers go round: the name stays itself
            del moved[key]
        elif final != d.target:
            moved[key] = replace(d, target=final)
    decisions = dict(result.decisions)
    for key, d in result.decisions.items():
        if key in moved:
            decisions[key] = moved[key]
        elif d.target in moved and not d.apart:
            decisions[key] = replace(d, target=moved[d.target].target)
    return replace(
        result,
        decisions=decisions,
        index={k: v for k, v in result.index.items() if v not in moved},
        display={k: v for k, v in result.display.items() if k not in moved},
        absorptions=[a for a in result.absorptions if a.key not in moved and a.target not in moved],
    )
