"""An alias world built apart from the resolution rules: one parameter per alias habit, several name styles.

Pure Python, no I/O and no app imports (the fake model's process rebuilds it from the same parameters).
Every aliased entity is written with one form in some documents and another form in others, never both in
one document, so only cross-document resolution can join them. The kinds (`ALIAS_KINDS`):

- inversion: "Treaty of Varga" / "Varga Treaty", "Valley of X" / "X Valley", "Port of X" / "X Port";
- root: the distinctive first word alone, "Varga" for "Varga Healthineers AG" (no other entity has the root);
- acronym: "Bank for Coastal Settlements" in one document, "BCS" (never defined) in another;
- order: a short form first ("Dr. Okafor", "Okafor", the root of an organisation), the full name only in a
  later document — documents are listed in the order they are to be ingested;
- variant: case, hyphen and suffix variants: "Varga-Reactor" / "varga reactor", "the Port of X" / "Port of
  X", "X Systems Ltd" / "X Systems".

Confusables, present in every world and never aliased: people sharing a surname ("Naseem Khan" / "Imran
Khan"), organisations sharing a root ("Acme Holdings" / "Acme Holding Group"), a place and a product sharing
a root ("Varga" the town, "Varga Reactor" the machine), inversion look-alikes ("Varga Bay" / "Bay Varga
Holdings" are not made: a different head word is a different thing, "Port of X" / "X Airport").
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from bench.quality_world import THEME_GROUPS, Document, Entity, Relation, Told, World, _Names

ALIAS_KINDS = ("inversion", "root", "acronym", "order", "variant")
STYLES = ("invented", "real")
_REAL_ROOTS_TEXT = (
    "Lisbon Fiorano Okafor Kessel Brandt Halden Oriel Varga Corvin Ashby Delmar Elstree Fenwick Garland "
    "Hollis Ingram Jessup Kilbride Lowther Mercer Norland Ostrava Pellham Redmond Sutter Thorne Upton "
    "Whitlock Yardley Zellner Abernathy Bellamy Castell Dunmore Everly Falkner Greaves Hartmann Ivanov "
    "Jaramillo Kowalski Lindqvist Moreau Nakamura Oyelaran Petrov Quintero Rasmussen Sandoval Takahashi "
    "Urquhart Valdivia Wexford Xenakis Yilmaz Zamora Adebayo Bergstrom Chaudhry Dalgaard Eriksen Fontaine "
    "Gallagher Horvath Iglesias Jovanovic Khalil Lombardi Mbeki Novak Ortega Pacheco Rahman Schubert "
    "Tanaka Ventura Weller Aldana Bristow Carrick Dorrance Eastwick Farrow Glenister Hapsburg Ilkley "
    "Kendrick Langford Marlowe Newbury Ormskirk Prescott"
)
_REAL_ROOTS = tuple(_REAL_ROOTS_TEXT.split())
_FIRST_NAMES_TEXT = (
    "Ngozi Imran Naseem Amara Chidi Lucia Tomas Priya Kenji Ingrid Mateo Fatima Olu Sven Aisha Rafael "
    "Mirela Joaquin Hana Dmitri Leila Omar Sofia Yusuf Elif Bongani Carmen Anil Greta Malik"
)
_FIRST_NAMES = tuple(_FIRST_NAMES_TEXT.split())
_INVERSIONS = (  # (of-form, compound form, kind)
    ("Treaty of {r}", "{r} Treaty", "event"),
    ("Crisis of {r}", "{r} Crisis", "event"),
    ("Siege of {r}", "{r} Siege", "event"),
    ("Valley of {r}", "{r} Valley", "place"),
    ("Port of {r}", "{r} Port", "place"),
    ("University of {r}", "{r} University", "institute"),
)
_ROOTED = (
    ("{r} Healthineers AG", "organisation"),
    ("{r} Reactor", "product"),
    ("{r} Dynamics Group", "organisation"),
    ("{r} Maritime Holdings", "organisation"),
    ("{r} Turbine X4", "product"),
)
_ACRONYM_HEADS = ("Bank", "Council", "Board", "Authority", "Commission", "Fund", "Office", "Bureau", "Agency")
_ACRONYM_ADJECTIVES = ("International", "Regional", "Coastal", "Northern", "Applied", "Industrial", "Rural", "Federal")
_ACRONYM_NOUNS = ("Settlements", "Development", "Fisheries", "Standards", "Research", "Transport", "Energy", "Health")
_VARIANTS = (  # (canonical, variant, kind)
    ("{r} Reactor", "{r}-Reactor", "product"),
    ("{r} Reactor", "{lr} reactor", "product"),
    ("Port of {r}", "the Port of {r}", "place"),
    ("{r} Systems", "{r} Systems Ltd", "organisation"),
    ("{r} Freight Lines", "{R} FREIGHT LINES, INC.", "organisation"),
)
_TEMPLATES = (
    "{a} worked with {b} on a {theme} in {year}.",
    "In {year}, {a} and {b} signed a {theme} worth {n} million.",
    "{a} joined {b} in a {theme} that lasted {n} years.",
    "Records from {year} show that {a} led a {theme} together with {b}.",
)
_PROFESSIONS = ("chemist", "surgeon", "diplomat", "engineer", "historian", "pilot", "economist", "lawyer")


class _Roots:
    def __init__(self, rng: random.Random, style: str) -> None:
        self.names = _Names(rng)
        self.pool = list(_REAL_ROOTS) if style == "real" else []
        self.firsts = list(_FIRST_NAMES) if style == "real" else []
        rng.shuffle(self.pool)
        rng.shuffle(self.firsts)
        self.used: set[str] = set()

    def root(self) -> str:
        while self.pool:
            word = self.pool.pop()
            if word not in self.used:
                self.used.add(word)
                return word
        word = self.names.root(2)
        self.used.add(word)
        return word

    def first(self) -> str:
        return self.firsts.pop() if self.firsts else self.names.root(2)


class _Builder:
    def __init__(self, seed: int, style: str, per_kind: int) -> None:
        self.rng = random.Random(f"{seed}/{style}")
        self.roots = _Roots(self.rng, style)
        self.per_kind = per_kind
        self.entities: dict[str, Entity] = {}
        self.kind_of: dict[str, str] = {}  # entity id → alias kind (or "confusable", "background")
        self.forms: dict[str, list[str]] = {}  # entity id → forms, one per stage (stage 0 documents come first)
        self.acronyms: set[str] = set()
        self.tail_serial = 0

    def add(self, name: str, kind: str, alias_kind: str, forms: list[str]) -> Entity:
        eid = f"A{len(self.entities):04d}"
        self.tail_serial += 1
        tail = f"{self.rng.choice(_PROFESSIONS) if kind == 'person' else 'an ' + kind} on record {self.tail_serial:05d}"
        entity = Entity(eid, name, kind, tail, variants=[f for f in forms if f != name])
        self.entities[eid], self.kind_of[eid], self.forms[eid] = entity, alias_kind, forms
        return entity

    def both_ways(self, a: str, b: str) -> list[str]:
        return [a, b] if self.rng.random() < 0.5 else [b, a]

    def inversion(self) -> None:
        for i in range(self.per_kind):
            of_form, compound, kind = _INVERSIONS[i % len(_INVERSIONS)]
            r = self.roots.root()
            forms = self.both_ways(of_form.format(r=r), compound.format(r=r))
            self.add(forms[0], kind, "inversion", forms)

    def root(self) -> None:
        for i in range(self.per_kind):
            pattern, kind = _ROOTED[i % len(_ROOTED)]
            r = self.roots.root()
            full = pattern.format(r=r)
            self.add(full, kind, "root", self.both_ways(full, r))

    def acronym(self) -> None:
        made = 0
        while made < self.per_kind:
            head = self.rng.choice(_ACRONYM_HEADS)
            words = [head, "for", self.rng.choice(_ACRONYM_ADJECTIVES), self.rng.choice(_ACRONYM_NOUNS)]
            if self.rng.random() < 0.5:
                words.insert(0, self.roots.root())
            full = " ".join(words)
            letters = "".join(w[0] for w in words if w[0].isupper())
            if letters in self.acronyms:
                continue
            self.acronyms.add(letters)
            self.add(full, "organisation", "acronym", self.both_ways(full, letters))
            made += 1

    def order(self) -> None:
        for i in range(self.per_kind):
            if i % 3 == 2:
                full = _ROOTED[0][0].format(r=(r := self.roots.root()))
                self.add(full, "organisation", "order", [r, full])
                continue
            surname = self.roots.root()
            full = f"{self.roots.first()} {surname}"
            short = f"Dr. {surname}" if i % 3 == 0 else surname
            self.add(full, "person", "order", [short, full])

    def variant(self) -> None:
        for i in range(self.per_kind):
            canonical, variant, kind = _VARIANTS[i % len(_VARIANTS)]
            r = self.roots.root()
            names = {"r": r, "lr": r.lower(), "R": r.upper()}
            full = canonical.format(**names)
            self.add(full, kind, "variant", self.both_ways(full, variant.format(**names)))

    def confusables(self) -> list[tuple[str, str, str]]:
        out = []
        surname = self.roots.root()
        a = self.add(f"{self.roots.first()} {surname}", "person", "confusable", [])
        b = self.add(f"{self.roots.first()} {surname}", "person", "confusable", [])
        out.append((a.id, b.id, "shared surname"))
        r = self.roots.root()
        a = self.add(f"{r} Holdings", "organisation", "confusable", [])
        b = self.add(f"{r} Holding Group", "organisation", "confusable", [])
        out.append((a.id, b.id, "shared root"))
        r = self.roots.root()
        a = self.add(r, "place", "confusable", [])
        b = self.add(f"{r} Reactor", "product", "confusable", [])
        out.append((a.id, b.id, "root of another type"))
        r = self.roots.root()
        a = self.add(f"Port of {r}", "place", "confusable", [])
        b = self.add(f"{r} Airport", "place", "confusable", [])
        out.append((a.id, b.id, "other head word"))
        return out

    def background(self, count: int) -> list[str]:
        ids = []
        for _ in range(count):
            kind = self.rng.choice(["person", "place"])
            name = f"{self.roots.first()} {self.roots.root()}" if kind == "person" else f"{self.roots.root()} Heights"
            ids.append(self.add(name, kind, "background", []).id)
        return ids


@dataclass
class AliasWorld:
    world: World
    kind_of: dict[str, str]  # entity id → its alias kind, "confusable" or "background"


def build_alias_world(
    seed: int = 1, style: str = "invented", kinds: tuple[str, ...] = ALIAS_KINDS, per_kind: int = 8
) -> AliasWorld:
    b = _Builder(seed, style, per_kind)
    for kind in kinds:
        getattr(b, kind)()
    confusables = b.confusables()
    background = b.background(12)
    stages: list[list[tuple[str, str]]] = [[], []]  # (entity id, form) mentions per stage
    for eid, forms in b.forms.items():
        if b.kind_of[eid] == "confusable":
            stages[0 if eid in {c[0] for c in confusables} else 1].append((eid, b.entities[eid].name))
        for stage, form in enumerate(forms):
            stages[stage].append((eid, form))
    relations: dict[str, Relation] = {}
    documents: list[Document] = []
    for stage in stages:
        b.rng.shuffle(stage)
        for start in range(0, len(stage), 4):
            documents.append(_document(b, len(documents), stage[start : start + 4], background, relations))
    return AliasWorld(World(b.entities, relations, documents, [], confusables), b.kind_of)


def _document(
    b: _Builder, number: int, mentions: list[tuple[str, str]], background: list[str], relations: dict[str, Relation]
) -> Document:
    doc_id = f"alias-{number:03d}"
    sentences, told, written = [f"Dossier {number} of the regional archive."], [], {}
    for eid, form in mentions:
        other = b.rng.choice(background)
        rid = f"R{len(relations):04d}"
        relations[rid] = Relation(
            rid,
            eid,
            other,
            b.rng.sample(b.rng.choice(THEME_GROUPS), 2),
            b.rng.choice(_TEMPLATES),
            b.rng.randint(1950, 2024),
            b.rng.randint(2, 90),
        )
        sentence = relations[rid].sentence(form, b.entities[other].name)
        sentences.append(sentence)
        told.append(Told(rid, sentence, form, b.entities[other].name))
        written[form], written[b.entities[other].name] = eid, other
    return Document(doc_id, " ".join(sentences), written, told)
