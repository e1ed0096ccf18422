"""A blind alias world: seeded projects of prose documents where entities are named the way writers name them,
written without reading the service's resolution rules or bench/alias_world.py (issue 33).

    build_blind_world(seed, per_habit=2) -> BlindWorld

Each aliased entity follows one alias habit (bench/alias_blind_habits.py: titles, honorifics, initials, surname
only, first name in a profile, nicknames, diacritics, transliterations, name order, possessives, legal
suffixes, ampersands, inversions, acronyms defined, undefined or given first, dotted abbreviations, "The X",
plurals, the root alone, hyphen/case spellings, diacritic and transliterated places, Saint/St., Mount/Mt.,
numerals, short product names, event years, event and treaty inversions, law and term abbreviations, term
spellings), written with different forms in different documents and within one. NEGATIVES must stay apart:
a shared surname, a shared root, parent and subsidiary, a town and its airport and university, one acronym for
two bodies, father and son, numbered programmes, one event in two years, product generations, a person named
like a town. The gold is duck-typed for tests/support/fakes/world_model.py: per document the forms written
(form -> entity id) and the relations stated; every entity's description carries a tail unique to it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bench import alias_blind_names as N
from bench.alias_blind_gold import BlindWorld, Document, Entity, Plan, Relation, Told
from bench.alias_blind_habits import DEF, EVENT, HABITS, LAW, ORG, PERSON, PLACE, PRODUCT, WITH_ARTICLE, Gen

__all__ = ["HABITS", "NEGATIVES", "BlindWorld", "build_blind_world"]

SAME_ACRONYM = [
    ("Public Health Agency", "Port Harbour Authority", "PHA"),
    ("Central Data Office", "Civil Defence Organisation", "CDO"),
    ("Marine Research Council", "Medical Research Council", "MRC"),
    ("National Seed Board", "Northern Sports Bureau", "NSB"),
    ("Grain Storage Commission", "Gender Salary Committee", "GSC"),
]


# --- negatives: entities that look alike and are not the same; (plans, first uses in one document?) ----------
def shared_surname(g: Gen) -> tuple[list[Plan], bool]:
    given, sur, culture = g.person()
    other = g.rng.choice([x for x in N.PEOPLE[culture][0] if x != given])
    return [
        Plan(f"{given} {sur}", PERSON, [[f"{given} {sur}", sur]]),
        Plan(f"{other} {sur}", PERSON, [[f"{other} {sur}", sur]]),
    ], False


def shared_root(g: Gen) -> tuple[list[Plan], bool]:
    root = g.word(N.ORG_ROOTS)
    one, two = g.rng.sample(N.ORG_TRADES, 2)
    return [
        Plan(f"{root} {one}", ORG, [[f"{root} {one} Ltd."], [f"{root} {one}"]]),
        Plan(f"{root} {two}", ORG, [[f"{root} {two}"]]),
    ], False


def parent_subsidiary(g: Gen) -> tuple[list[Plan], bool]:
    root, trade = g.word(N.ORG_ROOTS), g.rng.choice(N.ORG_TRADES)
    return [
        Plan(f"{root} Group", ORG, [[f"{root} Group"], [f"{root} Group"]]),
        Plan(f"{root} {trade} GmbH", ORG, [[f"{root} {trade} GmbH"], [f"{root} {trade}"]]),
    ], True


def town_and_namesakes(g: Gen) -> tuple[list[Plan], bool]:
    town = g.word(N.PLACES)
    return [
        Plan(town, PLACE, [[town], [town]]),
        Plan(f"{town} Airport", PLACE, [[f"{town} Airport"]]),
        Plan(f"University of {town}", ORG, [[f"University of {town}"], [f"{town} University"]]),
    ], True


def same_acronym(g: Gen) -> tuple[list[Plan], bool]:
    one, two, short = g.fresh(SAME_ACRONYM, key=lambda x: x[2])  # type: ignore[misc]
    return [Plan(one, ORG, [[f"{one}{DEF}{short}", short]]), Plan(two, ORG, [[f"{two}{DEF}{short}", short]])], False


def father_son(g: Gen) -> tuple[list[Plan], bool]:
    given, sur, _ = g.person()
    full = f"{given} {sur}"
    return [
        Plan(f"{full} Sr.", PERSON, [[f"{full} Sr."]]),
        Plan(f"{full} Jr.", PERSON, [[f"{full} Jr."], [f"{full} Jr."]]),
    ], True


def numbered_programmes(g: Gen) -> tuple[list[Plan], bool]:
    plan = g.word(N.PROGRAMMES)
    (w1, n1, *_), (w2, *_) = g.rng.sample(N.ORDINALS, 2)
    return [
        Plan(f"{w1} {plan}", LAW, [[f"{w1} {plan}"], [f"{n1} {plan}"]]),
        Plan(f"{w2} {plan}", LAW, [[f"{w2} {plan}"]]),
    ], False


def event_two_years(g: Gen) -> tuple[list[Plan], bool]:
    place, kind = g.word(N.PLACES), g.rng.choice(N.EVENTS)
    y1, y2 = sorted(g.rng.sample(range(1998, 2025), 2))
    return [
        Plan(f"{y1} {place} {kind}", EVENT, [[f"{y1} {place} {kind}"]]),
        Plan(f"{y2} {place} {kind}", EVENT, [[f"{place} {kind} {y2}"]]),
    ], False


def product_generations(g: Gen) -> tuple[list[Plan], bool]:
    line, tail = g.word(N.PRODUCT_LINES), g.rng.choice(N.PRODUCT_TAILS)
    return [Plan(f"{line} {tail} {k}", PRODUCT, [[f"{line} {tail} {k}"]]) for k in (2, 3)], True


def person_named_like_town(g: Gen) -> tuple[list[Plan], bool]:
    town = g.word(N.PLACES)
    given, _, _ = g.person()
    return [Plan(town, PLACE, [[town]]), Plan(f"{given} {town}", PERSON, [[f"{given} {town}", town]])], False


NEGATIVES: dict[str, Callable[[Gen], tuple[list[Plan], bool]]] = {
    f.__name__: f
    for f in (
        shared_surname,
        shared_root,
        parent_subsidiary,
        town_and_namesakes,
        same_acronym,
        father_son,
        numbered_programmes,
        event_two_years,
        product_generations,
        person_named_like_town,
    )
}


# --- prose -----------------------------------------------------------------------------------------------------
START = {
    PERSON: [
        "{x} spoke at length about {topic}.",
        "{x} has worked on {topic} for many years.",
        "{x} declined to comment on the latest figures.",
    ],
    ORG: [
        "{x} announced new investment in {topic}.",
        "{x} opened a regional office last year.",
        "{x} published its annual review of {topic}.",
    ],
    PLACE: ["{x} lies along the old trade route.", "{x} saw heavy flooding in the spring."],
    PRODUCT: ["{x} went on sale in several markets.", "{x} was recalled briefly over a wiring fault."],
    EVENT: ["{x} drew delegates from many countries.", "{x} is still discussed by historians of {topic}."],
    LAW: ["{x} changed how {topic} is regulated.", "{x} took effect the following year."],
}
MID = {
    PERSON: [
        "According to {x}, the results were better than expected.",
        "The committee invited {x} to review the plan.",
        "Colleagues describe {x} as careful and patient.",
    ],
    ORG: [
        "A spokesperson for {x} confirmed the figures.",
        "Much of the funding came from {x}.",
        "Inspectors visited {x} twice during the year.",
    ],
    PLACE: ["Delegates travelled to {x} for the talks.", "Rainfall in {x} was well above average."],
    PRODUCT: ["Engineers tested {x} under field conditions.", "Farmers said {x} was easy to repair."],
    EVENT: ["Much was said during {x} about {topic}.", "Few observers expected {x} to matter so much."],
    LAW: ["Critics argued that {x} went too far.", "Officials cited {x} when refusing the permit."],
}
FOLLOW = {  # sentences naming nobody, so that a paragraph reads as prose rather than a list of names
    PERSON: ["Their early work was in {topic}.", "Former colleagues recall long field trips and short reports."],
    ORG: ["Its accounts are published every spring.", "Staff numbers have doubled in a decade."],
    PLACE: ["The local economy depends heavily on {topic}.", "Roads there are often closed in winter."],
    PRODUCT: ["Reviews were mixed at first.", "Spare parts remain hard to find outside the capital."],
    EVENT: ["Attendance was higher than planned.", "The final communique was short."],
    LAW: ["Its drafting took several years.", "Several provisions were later challenged in court."],
}
TERM_MID = [
    "Rates of {x} rose sharply in the district.",
    "Clinics and laboratories now report {x} routinely.",
    "The guidance on {x} was revised in the autumn.",
]
POSSESSIVE = ["{x} report on {topic} was published in the spring.", "Much of the work rests on {x} earlier survey."]
LINKS = [
    ("The review linked {a} with {b}.", "link, review"),
    ("Reports on {topic} connect {a} to {b}.", "connection, reporting"),
    ("Observers compared {a} with {b} at some length.", "comparison"),
    ("A joint statement named both {a} and {b}.", "joint statement"),
    ("Records from the period tie {a} closely to {b}.", "historical record"),
]


def _contains(longer: str, shorter: str) -> bool:
    return longer != shorter and re.search(rf"(?<!\w){re.escape(shorter)}(?!\w)", longer) is not None


def _forms(steps: list[str]) -> list[str]:
    return [f for s in steps for f in s.split(DEF)]


def _fits(doc: dict[str, str], eid: str, forms: list[str], entities: dict[str, Entity]) -> bool:
    """No entity twice in a document, no form meaning two entities, and no short form of one entity written
    inside another's name there (a reader could not tell them apart); a full name inside another is fine."""
    if eid in doc.values():
        return False
    for form in forms:
        for other, owner in doc.items():
            if other.casefold() == form.casefold():
                return False
            if _contains(other, form) and form != entities[eid].name:
                return False
            if _contains(form, other) and other != entities[owner].name:
                return False
    return True


def _place(groups: list[list[tuple[str, list[str]]]], entities: dict[str, Entity], g: Gen, size: int) -> list[list]:
    docs: list[dict[str, str]] = [{} for _ in range(size)]
    uses: list[list[tuple[str, list[str]]]] = [[] for _ in range(size)]
    for group in groups:
        fitting = [
            i
            for i in range(len(docs))
            if all(
                _fits(docs[i] | {f: e for e, s in group[:k] for f in _forms(s)}, eid, _forms(steps), entities)
                for k, (eid, steps) in enumerate(group)
            )
        ]
        if not fitting:
            docs.append({})
            uses.append([])
            fitting = [len(docs) - 1]
        least = min(len(uses[i]) for i in fitting)
        target = g.rng.choice([i for i in fitting if len(uses[i]) <= least + 1])
        for eid, steps in group:
            docs[target].update({f: eid for f in _forms(steps)})
            uses[target].append((eid, steps))
    return uses


def _render(form: str, kind: str, start: bool) -> str:
    if kind in WITH_ARTICLE and not form.lower().startswith("the "):
        return f"{'The' if start else 'the'} {form}"
    return form


def _sentence(g: Gen, step: str, entity: Entity, topic: str) -> str:
    parts = step.split(DEF)
    form = parts[0]
    if form.endswith(("'s", "\u2019s")):
        return g.rng.choice(POSSESSIVE).format(x=form, topic=topic)
    mid_only = form[0].islower() or entity.type == LAW and entity.name[0].islower()
    start = form.startswith("The ") or (not mid_only and g.rng.random() < 0.5)
    if entity.habit.startswith("term"):
        start = False
    x = _render(form, entity.type, start) + (f" ({parts[1]})" if len(parts) > 1 else "")
    pool = TERM_MID if entity.habit.startswith("term") else (START if start else MID)[entity.type]
    return g.rng.choice(pool).format(x=x, topic=topic).replace("..", ".")


def _write(g: Gen, seed: int, n: int, uses: list[tuple[str, list[str]]], world: BlindWorld) -> Document:
    topic = g.rng.choice(N.FIELDS)
    first: list[str] = []
    later: list[str] = []
    told: list[Told] = []
    mentions = {f: eid for eid, steps in uses for f in _forms(steps)}
    for eid, steps in uses:
        entity = world.entities[eid]
        first.append(_sentence(g, steps[0], entity, topic))
        if g.rng.random() < 0.6:
            first[-1] += " " + g.rng.choice(FOLLOW[entity.type]).format(topic=topic)
        later += [_sentence(g, step, entity, topic) for step in steps[1:]]
    for (ea, sa), (eb, sb) in zip(uses, uses[1:], strict=False):
        fa = [f for f in _forms(sa) if not f.endswith(("'s", "\u2019s")) and not f.startswith("The ")]
        fb = [f for f in _forms(sb) if not f.endswith(("'s", "\u2019s")) and not f.startswith("The ")]
        if not fa or not fb:
            continue
        a, b = g.rng.choice(fa), g.rng.choice(fb)
        template, keywords = g.rng.choice(LINKS)
        ta, tb = world.entities[ea].type, world.entities[eb].type
        sentence = template.format(a=_render(a, ta, False), b=_render(b, tb, False), topic=topic).replace("..", ".")
        rid = f"r{len(world.relations)}"
        world.relations[rid] = Relation(ea, eb, keywords)
        told.append(Told(a, b, rid, sentence))
        (later if g.rng.random() < 0.5 else first).append(sentence)
    body = first + later
    paragraphs = [" ".join(body[i : i + 4]) for i in range(0, len(body), 4)]
    head = f"Dossier {seed}.{n}: field notes on {topic}, compiled for the regional archive."
    return Document(f"blind-{seed}-{n:02d}", "\n\n".join([head, *paragraphs]), mentions, told)


def build_blind_world(
    seed: int, per_habit: int = 2, habits: tuple[str, ...] | None = None, negatives: bool = True
) -> BlindWorld:
    g = Gen(seed)
    world = BlindWorld(seed, {}, [], {}, [])
    groups: list[list[tuple[str, list[str]]]] = []

    def register(plan: Plan, habit: str) -> str:
        eid = f"e{len(world.entities)}"
        world.entities[eid] = Entity(eid, plan.name, plan.type, g.tail(plan.type), habit)
        return eid

    for habit in habits or tuple(HABITS):
        for _ in range(per_habit):
            plan = HABITS[habit](g)
            eid = register(plan, habit)
            groups += [[(eid, steps)] for steps in plan.uses]
    if negatives:
        for kind, make in NEGATIVES.items():
            plans, together = make(g)
            ids = [register(p, f"neg:{kind}") for p in plans]
            world.negatives += [(a, b, kind) for i, a in enumerate(ids) for b in ids[i + 1 :]]
            rest = [[(eid, steps)] for eid, p in zip(ids, plans, strict=True) for steps in p.uses[together:]]
            groups += [[(eid, p.uses[0]) for eid, p in zip(ids, plans, strict=True)]] if together else []
            groups += rest
    for _ in range(per_habit * 3):  # entities written one way only, for the prose's sake
        given, sur, _ = g.person()
        groups.append([(register(Plan(f"{given} {sur}", PERSON, []), "plain"), [f"{given} {sur}"])])
    g.rng.shuffle(groups)
    size = max(4, sum(len(gr) for gr in groups) // 7)
    for uses in _place(groups, world.entities, g, size):
        if uses:
            world.documents.append(_write(g, seed, len(world.documents) + 1, uses, world))
    return world
