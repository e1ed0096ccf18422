"""A seeded synthetic world for the retrieval-quality benchmark: entities, relations, documents, questions.

Pure Python, no I/O and no app imports, so the benchmark, the fake model (in its own process) and the
tests all rebuild the same world from the same (seed, entities, docs, aliases) parameters.

- Entities of six kinds with invented names and a unique description tail ("a chemist born in 1961").
- Relations carry 2-3 themes from one of ten theme groups and ONE stating sentence naming both ends.
- Documents narrate overlapping neighbourhoods of relations (a few long ones); every relation is told at
  least once, hubs appear in many documents, leaves in one.
- Aliases (~30% of entities): legal suffixes, upper case, doubled spaces, diacritics, curly quotes, a
  leading "The", person titles, surnames after the full name, acronyms defined in the text. Confusable but
  distinct entities: near-identical organisation names, people sharing a surname (partial names in
  different documents), one name for two kinds of thing (never in the same document).
- Questions with gold entity ids and relation ids: single-entity, thematic, multi-hop and alias.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, field

THEME_GROUPS = [
    ["seed funding", "loan agreement", "investment round", "financial audit"],
    ["research collaboration", "joint publication", "laboratory partnership", "patent licensing"],
    ["supply contract", "export deal", "distribution network", "raw materials"],
    ["employment", "mentorship", "board membership", "executive hiring"],
    ["legal dispute", "regulatory fine", "court ruling", "contract breach"],
    ["port expansion", "rail construction", "grid maintenance", "water supply"],
    ["clinical trial", "vaccine distribution", "hospital equipment", "medical training"],
    ["press coverage", "documentary production", "broadcast rights", "advertising campaign"],
    ["emission reduction", "reforestation project", "wildlife protection", "pollution cleanup"],
    ["scholarship programme", "museum exhibition", "sports sponsorship", "music festival"],
]
THEMES = [t for group in THEME_GROUPS for t in group]
KINDS = ["person", "organisation", "place", "institute", "product", "event"]
KIND_WEIGHTS = [30, 25, 15, 12, 10, 8]
APP_TYPE = {
    "person": "Person",
    "organisation": "Organization",
    "place": "Location",
    "institute": "Organization",
    "product": "Artifact",
    "event": "Event",
}
TEMPLATES = [
    "{a} worked with {b} on a {theme} in {year}.",
    "In {year}, {a} and {b} signed a {theme} worth {n} million.",
    "{a} joined {b} in a {theme} that lasted {n} years.",
    "{a} and {b} announced a {theme} in the spring of {year}.",
    "Records from {year} show that {a} led a {theme} together with {b}.",
]
FILLER = [
    "The archive holds several boxes of letters from that period.",
    "Local newspapers followed the story closely for a few weeks.",
    "Observers described the atmosphere as cautious but hopeful.",
    "Most of the paperwork was completed within a single season.",
    "A later review found the figures broadly consistent.",
    "Weather delays pushed some of the work into the following year.",
    "The details were summarised in an internal memo.",
    "Nobody involved expected the arrangement to attract much attention.",
]
PROFESSIONS = [
    "chemist",
    "architect",
    "economist",
    "geologist",
    "journalist",
    "surgeon",
    "lawyer",
    "engineer",
    "historian",
    "botanist",
    "pilot",
    "composer",
    "statistician",
    "diplomat",
    "sculptor",
]
SECTORS = ["Energy", "Freight", "Textiles", "Systems", "Mining", "Foods", "Media", "Bank", "Logistics", "Pharma"]
PLACE_KINDS = [
    "coastal town",
    "mountain village",
    "river port",
    "industrial city",
    "island district",
    "market town",
    "valley settlement",
]
FIELDS = [
    "soil chemistry",
    "marine biology",
    "urban planning",
    "materials science",
    "linguistics",
    "epidemiology",
    "climate modelling",
    "robotics",
    "ancient trade routes",
]
PRODUCT_KINDS = ["water pump", "drone", "tablet", "tractor", "heat exchanger", "sensor array", "ferry engine"]
EVENT_KINDS = ["trade fair", "film festival", "regatta", "science congress", "harvest fair", "chess open"]
TITLES = ["Dr.", "Prof.", "Captain", "Ms.", "Mr."]
LEGAL = ["Ltd.", "Inc.", "GmbH", "S.A.", "LLC", "Corp."]
ACCENTS = {"a": "á", "e": "é", "o": "ö", "u": "ü", "i": "í"}
_ONSETS = [
    "b",
    "br",
    "d",
    "dr",
    "f",
    "g",
    "gr",
    "h",
    "k",
    "kr",
    "l",
    "m",
    "n",
    "p",
    "pr",
    "r",
    "s",
    "st",
    "t",
    "tr",
    "v",
    "z",
    "qu",
    "sk",
    "th",
]
_VOWELS = ["a", "e", "i", "o", "u", "ae", "ia", "ou"]
_CODAS = ["", "", "n", "r", "l", "s", "k", "th", "v", "m"]


@dataclass
class Entity:
    id: str
    name: str  # canonical form
    kind: str
    tail: str  # unique description tail: "<name> is <tail>."
    variants: list[str] = field(default_factory=list)  # other full forms used in some documents
    partial: str | None = None  # surname: only after the full form in the same document
    acronym: str | None = None  # defined in the text: "Full Name (ABC)", then "ABC"

    @property
    def type(self) -> str:
        return APP_TYPE[self.kind]

    @property
    def aliased(self) -> bool:
        return bool(self.variants or self.partial or self.acronym)

    def description(self, surface: str) -> str:
        return f"{surface} is {self.tail}."


@dataclass
class Relation:
    id: str
    a: str
    b: str
    themes: list[str]
    template: str
    year: int
    n: int

    @property
    def keywords(self) -> str:
        return ", ".join(self.themes)

    def sentence(self, a: str, b: str) -> str:
        return self.template.format(a=a, b=b, theme=self.themes[0], year=self.year, n=self.n)


@dataclass
class Told:
    relation: str
    sentence: str
    a: str  # surface forms as used in the sentence
    b: str


@dataclass
class Document:
    id: str
    text: str
    mentions: dict[str, str]  # surface form as written -> entity id, in this document
    told: list[Told]


@dataclass
class Question:
    kind: str  # entity | thematic | multihop | alias
    text: str
    hl: list[str]
    ll: list[str]
    entities: list[str]  # gold entity ids
    relations: list[str]  # gold relation ids


@dataclass
class World:
    entities: dict[str, Entity]
    relations: dict[str, Relation]
    documents: list[Document]
    questions: list[Question]
    confusables: list[tuple[str, str, str]]  # (id, id, kind of confusion)

    def renderings(self) -> dict[str, set[str]]:
        """Every sentence text that tells a relation somewhere, by relation id."""
        out: dict[str, set[str]] = defaultdict(set)
        for doc in self.documents:
            for told in doc.told:
                out[told.relation].add(told.sentence)
        return out

    def forms_used(self) -> dict[str, set[str]]:
        """Surface forms each entity is written with in the documents."""
        out: dict[str, set[str]] = defaultdict(set)
        for doc in self.documents:
            for surface, eid in doc.mentions.items():
                out[eid].add(surface)
        return out

    def neighbours(self, eid: str) -> list[str]:
        return [r.b if r.a == eid else r.a for r in self.relations.values() if eid in (r.a, r.b)]


class _Names:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def root(self, syllables: int = 2) -> str:
        while True:
            word = "".join(
                self.rng.choice(_ONSETS) + self.rng.choice(_VOWELS) + self.rng.choice(_CODAS) for _ in range(syllables)
            )
            if 4 <= len(word) <= 10 and word not in self.used:
                self.used.add(word)
                return word.capitalize()


def _acronym(name: str) -> str:
    return "".join(w[0] for w in name.split() if w[0].isupper())


def _make_entity(eid: str, kind: str, names: _Names, rng: random.Random, tails: set[str]) -> Entity:
    while True:
        if kind == "person":
            name = f"{names.root()} {names.root(rng.choice([2, 3]))}"
            tail = f"a {rng.choice(PROFESSIONS)} born in {rng.randint(1930, 1999)}"
        elif kind == "organisation":
            words = [names.root(), rng.choice(SECTORS)] + (["Holdings"] if rng.random() < 0.35 else [])
            name = " ".join(words)
            tail = (
                f"a {name.split()[1].lower()} company founded in {rng.randint(1900, 2015)} with about "
                f"{rng.randint(2, 90) * 100} employees"
            )
        elif kind == "place":
            name = names.root(rng.choice([2, 3])) + rng.choice(["", "", " Bay", " Valley", " Heights"])
            tail = f"a {rng.choice(PLACE_KINDS)} with about {rng.randint(2, 400) * 250} residents"
        elif kind == "institute":
            pattern = rng.choice(["{r} Research Institute", "{r} Institute of Technology", "{r} Centre for Study"])
            name = pattern.format(r=names.root())
            tail = f"a research institute founded in {rng.randint(1880, 2015)} that studies {rng.choice(FIELDS)}"
        elif kind == "product":
            name = f"{names.root()} {rng.choice(['X', 'M', 'Pro ', 'S'])}{rng.randint(2, 9)}".replace("  ", " ")
            tail = f"a {rng.choice(PRODUCT_KINDS)} first sold in {rng.randint(1960, 2024)}"
        else:
            name = f"{names.root()} {rng.choice(['Summit', 'Festival', 'Games', 'Congress'])}"
            tail = f"a {rng.choice(EVENT_KINDS)} held every {rng.randint(1, 5)} years since {rng.randint(1900, 2020)}"
        if tail not in tails and not any(tail in t or t in tail for t in tails):
            tails.add(tail)
            return Entity(eid, name, kind, tail)


def _accented(name: str) -> str:
    """The name with its first plain vowel accented ("Orvik" -> "Örvik"): a diacritics variant."""
    for i, ch in enumerate(name):
        if ch.lower() in ACCENTS:
            accent = ACCENTS[ch.lower()]
            return name[:i] + (accent.upper() if ch.isupper() else accent) + name[i + 1 :]
    return name


def _add_aliases(e: Entity, rng: random.Random) -> None:
    words = e.name.split()
    if e.kind == "person":
        e.variants.append(f"{rng.choice(TITLES)} {e.name}")
        if rng.random() < 0.3:
            e.variants.append(_accented(e.name))
        e.partial = words[-1]
    elif e.kind == "organisation":
        e.variants.append(f"{e.name} {rng.choice(LEGAL)}")
        e.variants.append(e.name.upper() if rng.random() < 0.6 else e.name.replace(" ", "  ", 1))
        if len(words) >= 3:
            e.acronym = _acronym(e.name)
    elif e.kind == "institute":
        e.variants.append(f"The {e.name}")
        e.acronym = _acronym(e.name)
    elif e.kind == "place":
        e.variants.append(_accented(e.name))
    elif e.kind == "product":
        e.variants.append(f"“{e.name}”" if rng.random() < 0.5 else e.name.replace(" ", "-"))
    else:
        e.variants.append(f"The {e.name}")
    e.variants = [v for v in dict.fromkeys(e.variants) if v != e.name]


def build_world(seed: int = 7, n_entities: int = 300, n_docs: int = 100, aliases: bool = True) -> World:
    rng = random.Random(seed)
    names, tails = _Names(rng), set()
    entities: dict[str, Entity] = {}
    for i in range(n_entities):
        eid = f"E{i:04d}"
        entities[eid] = _make_entity(eid, rng.choices(KINDS, KIND_WEIGHTS)[0], names, rng, tails)
    confusables = _confusables(entities, names, rng, tails, aliases)
    if aliases:
        twins = {x for a, b, _ in confusables for x in (a, b)}
        for e in entities.values():
            if e.id not in twins and rng.random() < 0.3:
                _add_aliases(e, rng)
    _check_acronyms(entities)
    relations = _relations(list(entities), rng)
    documents = _documents(entities, relations, confusables, n_docs, rng, aliases)
    world = World(entities, relations, documents, [], confusables)
    world.questions = _questions(world, rng)
    return world


def _confusables(
    entities: dict[str, Entity], names: _Names, rng: random.Random, tails: set[str], aliases: bool
) -> list[tuple[str, str, str]]:
    """Extra entities that look like existing ones but are different things."""
    out: list[tuple[str, str, str]] = []
    orgs = [e for e in entities.values() if e.kind == "organisation" and len(e.name.split()) == 2][:4]
    people = [e for e in entities.values() if e.kind == "person"][:4]
    places = [e for e in entities.values() if e.kind == "place" and " " not in e.name][:3]

    def add(kind: str, name: str) -> Entity:
        eid = f"E{len(entities):04d}"
        twin = _make_entity(eid, kind, names, rng, tails)
        twin.name = name
        entities[eid] = twin
        return twin

    for org in orgs:
        root, sector = org.name.split()
        plural = {"Energy": "Energies", "Bank": "Banking", "Media": "Media Partners"}.get(sector, sector)
        twin = add("organisation", f"{root} {plural} Group")
        twin.tail = twin.tail.replace(twin.tail.split()[1], sector.lower(), 1)
        out.append((org.id, twin.id, "similar name"))
    for person in people:
        twin = add("person", f"{names.root()} {person.name.split()[-1]}")
        if aliases:
            person.partial, twin.partial = person.name.split()[-1], twin.name.split()[-1]
        out.append((person.id, twin.id, "shared surname"))
    for place in places:
        twin = add("product", place.name if aliases else f"{place.name} {rng.randint(2, 9)}")
        out.append((place.id, twin.id, "same name, other type"))
    return out


def _check_acronyms(entities: dict[str, Entity]) -> None:
    """An acronym must not equal any other surface form of the world; drop the colliding ones."""
    forms = {f for e in entities.values() for f in [e.name, *e.variants]}
    seen: set[str] = set()
    for e in entities.values():
        if e.acronym and (e.acronym in forms or e.acronym in seen or len(e.acronym) < 2):
            e.acronym = None
        elif e.acronym:
            seen.add(e.acronym)


def _relations(ids: list[str], rng: random.Random) -> dict[str, Relation]:
    pairs: set[tuple[str, str]] = set()
    degree = dict.fromkeys(ids, 0)
    order = ids[:]
    rng.shuffle(order)
    wanted = int(len(ids) * 1.6)
    for i, eid in enumerate(order[1:], start=1):  # a spanning tree: nobody is isolated
        pairs.add(tuple(sorted((eid, rng.choice(order[:i])))))  # type: ignore[arg-type]
    for a, b in pairs:
        degree[a] += 1
        degree[b] += 1
    while len(pairs) < wanted:
        a = rng.choices(ids, [degree[x] ** 1.5 + 1 for x in ids])[0]
        b = rng.choice(ids)
        pair = tuple(sorted((a, b)))
        if a != b and pair not in pairs:
            pairs.add(pair)  # type: ignore[arg-type]
            degree[a] += 1
            degree[b] += 1
    out: dict[str, Relation] = {}
    for i, (a, b) in enumerate(sorted(pairs)):
        group = rng.choice(THEME_GROUPS)
        themes = rng.sample(group, rng.choice([2, 3]))
        if rng.random() < 0.5:
            a, b = b, a
        out[f"R{i:04d}"] = Relation(
            f"R{i:04d}", a, b, themes, rng.choice(TEMPLATES), rng.randint(1950, 2024), rng.randint(2, 90)
        )
    return out


def _documents(
    entities: dict[str, Entity],
    relations: dict[str, Relation],
    confusables: list[tuple[str, str, str]],
    n_docs: int,
    rng: random.Random,
    aliases: bool,
) -> list[Document]:
    by_entity: dict[str, list[str]] = defaultdict(list)
    for r in relations.values():
        by_entity[r.a].append(r.id)
        by_entity[r.b].append(r.id)
    apart = {frozenset((a, b)) for a, b, _ in confusables}  # never told in one document
    weights = [len(by_entity[e]) for e in entities]
    plans: list[list[str]] = []
    covered: set[str] = set()
    long_docs = max(1, n_docs // 30)
    for d in range(n_docs):
        size = rng.randint(120, 160) if d < long_docs else rng.randint(5, 12)
        pool: list[str] = []
        while len(pool) < size * 2 and len(pool) < len(relations) // 2:  # neighbourhoods of a few seeds
            seed = rng.choices(list(entities), weights)[0]
            pool += [
                x
                for rid in by_entity[seed]
                for end in (relations[rid].a, relations[rid].b)
                for x in [rid, *by_entity[end]]
            ]
        pool = list(dict.fromkeys(pool))
        rng.shuffle(pool)
        pool.sort(key=lambda rid: rid in covered)  # untold relations first, then some retold ones
        plan: list[str] = []
        for rid in pool:
            if len(plan) >= size:
                break
            if _fits(rid, plan, relations, apart):
                plan.append(rid)
        covered.update(plan)
        plans.append(plan)
    for rid in sorted(set(relations) - covered):  # every relation is told at least once
        for plan in sorted(plans, key=len):
            if _fits(rid, plan, relations, apart):
                plan.append(rid)
                break
        else:
            plans.append([rid])
    return [_render(f"world-{d:03d}", plan, entities, relations, rng, aliases) for d, plan in enumerate(plans)]


def _fits(rid: str, plan: list[str], relations: dict[str, Relation], apart: set[frozenset[str]]) -> bool:
    r = relations[rid]
    present = {x for p in plan for x in (relations[p].a, relations[p].b)}
    return not any(frozenset((end, other)) in apart for end in (r.a, r.b) for other in present)


def _render(
    doc_id: str,
    plan: list[str],
    entities: dict[str, Entity],
    relations: dict[str, Relation],
    rng: random.Random,
    aliases: bool,
) -> Document:
    first: dict[str, str] = {}  # entity -> full form chosen for this document
    introduced: set[str] = set()
    define_acronym = {e for e in entities if aliases and entities[e].acronym and rng.random() < 0.6}
    use_partial = {e for e in entities if aliases and entities[e].partial and rng.random() < 0.6}
    mentions: dict[str, str] = {}
    told: list[Told] = []
    paragraphs: list[list[str]] = [[]]

    def surface(eid: str) -> tuple[str, str]:
        """(text written in the sentence, the entity's surface form in it)."""
        e = entities[eid]
        if eid not in first:
            first[eid] = rng.choice([e.name, e.name, *e.variants]) if aliases else e.name
        full = first[eid]
        if eid not in introduced:
            introduced.add(eid)
            mentions[full] = eid
            if eid in define_acronym:
                mentions[e.acronym] = eid  # type: ignore[index]
                return f"{full} ({e.acronym})", full
            return full, full
        if eid in define_acronym and rng.random() < 0.7:
            return e.acronym, e.acronym  # type: ignore[return-value]
        if eid in use_partial and rng.random() < 0.6:
            mentions[e.partial] = eid  # type: ignore[index]
            return e.partial, e.partial  # type: ignore[return-value]
        return full, full

    for rid in plan:
        r = relations[rid]
        (ta, sa), (tb, sb) = surface(r.a), surface(r.b)
        text = r.sentence(ta, tb)
        told.append(Told(rid, text, sa, sb))
        paragraphs[-1].append(text)
        if rng.random() < 0.5:
            paragraphs[-1].append(rng.choice(FILLER))
        if len(paragraphs[-1]) >= 6:
            paragraphs.append([])
    text = "\n\n".join(" ".join(p) for p in paragraphs if p)
    return Document(doc_id, text, mentions, told)


def _questions(world: World, rng: random.Random, per_kind: int = 20) -> list[Question]:
    ents, rels = world.entities, world.relations
    incident: dict[str, list[str]] = defaultdict(list)
    for r in rels.values():
        incident[r.a].append(r.id)
        incident[r.b].append(r.id)
    twins = {x for a, b, _ in world.confusables for x in (a, b)}
    out: list[Question] = []

    def about(eid: str, asked: str, kind: str) -> Question:
        return Question(
            kind,
            f"What do we know about {asked}?",
            ["background", "relationships"],
            [asked],
            [eid, *world.neighbours(eid)],
            list(incident[eid]),
        )

    plain = sorted(e for e in ents if 2 <= len(incident[e]) <= 8 and e not in twins)
    for eid in rng.sample(plain, min(per_kind + 10, len(plain))):
        out.append(about(eid, ents[eid].name, "entity"))
    used = world.forms_used()
    aliased = sorted(e for e in ents if e not in twins and len(used[e]) > 1)
    for eid in rng.sample(aliased, min(per_kind, len(aliased))):
        forms = sorted(f for f in used[eid] if f != ents[eid].name and f != ents[eid].partial)
        if forms:
            out.append(about(eid, rng.choice(forms), "alias"))
    by_theme: dict[str, list[str]] = defaultdict(list)
    for r in rels.values():
        for theme in r.themes:
            by_theme[theme].append(r.id)
    for theme in rng.sample(THEMES, min(per_kind // 2, len(THEMES))):
        gold = by_theme[theme]
        out.append(
            Question(
                "thematic",
                f"Which relationships involve {theme}?",
                [theme],
                [],
                sorted({x for rid in gold for x in (rels[rid].a, rels[rid].b)}),
                gold,
            )
        )
    pairs = [(t1, t2) for g in THEME_GROUPS for i, t1 in enumerate(g) for t2 in g[i + 1 :]]
    pairs = [p for p in pairs if len(set(by_theme[p[0]]) & set(by_theme[p[1]])) >= 3]
    for t1, t2 in rng.sample(pairs, min(per_kind // 2, len(pairs))):
        gold = sorted(set(by_theme[t1]) & set(by_theme[t2]))
        out.append(
            Question(
                "thematic",
                f"Which relationships combine {t1} and {t2}?",
                [t1, t2],
                [],
                sorted({x for rid in gold for x in (rels[rid].a, rels[rid].b)}),
                gold,
            )
        )
    out.extend(_multihop(world, incident, twins, rng, per_kind))
    return out


def _multihop(
    world: World, incident: dict[str, list[str]], twins: set[str], rng: random.Random, count: int
) -> list[Question]:
    ents, rels = world.entities, world.relations
    link = {frozenset((r.a, r.b)): r.id for r in rels.values()}
    found: list[Question] = []
    middles = sorted(e for e in ents if len(incident[e]) >= 2)
    rng.shuffle(middles)
    for b in middles:
        ends = _ends_through(world, b, link, twins, rng)
        if ends is not None:
            a, c = ends
            found.append(
                Question(
                    "multihop",
                    f"How is {ents[a].name} connected to {ents[c].name}?",
                    ["connection", "intermediary"],
                    [ents[a].name, ents[c].name],
                    [a, b, c],
                    [link[frozenset((a, b))], link[frozenset((b, c))]],
                )
            )
        if len(found) >= count:
            break
    return found


def _ends_through(
    world: World, b: str, link: dict[frozenset[str], str], twins: set[str], rng: random.Random
) -> tuple[str, str] | None:
    """Two neighbours of b that are not linked and whose only common neighbour is b."""
    nbs = sorted(set(world.neighbours(b)) - twins)
    rng.shuffle(nbs)
    for i, a in enumerate(nbs):
        for c in nbs[i + 1 :]:
            if frozenset((a, c)) not in link and set(world.neighbours(a)) & set(world.neighbours(c)) == {b}:
                return a, c
    return None
