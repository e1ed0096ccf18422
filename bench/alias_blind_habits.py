"""Alias habits of the blind alias world (bench/alias_world_blind.py): the entities, documents and gold it is made
of, and one function per habit giving an entity's canonical name, type and the forms each document writes."""

from __future__ import annotations

import random

from bench import alias_blind_names as N
from bench.alias_blind_gold import Plan, PoolExhausted

PERSON, ORG, PLACE, PRODUCT, EVENT, LAW, TERM = (
    "Person",
    "Organization",
    "Location",
    "Artifact",
    "Event",
    "Concept",
    "Concept",
)
WITH_ARTICLE = {EVENT, LAW}  # "the 2019 Osogbo Summit", "the Treaty of Zadar" (products and people take none)
DEF = "\x1f"  # a step "A\x1fB" writes "A (B)" in one sentence: both forms are mentions


class Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.cultures = self.rng.sample(sorted(N.PEOPLE), 4)
        self.taken: set[str] = set()
        self.years = self.rng.sample(range(1801, 2024), 223)

    def fresh(self, pool: list, key=lambda x: x) -> object:  # noqa: ANN001
        options = [x for x in pool if key(x) not in self.taken]
        if not options:
            raise PoolExhausted("name pool exhausted: lower --per-habit")
        pick = self.rng.choice(options)
        self.taken.add(key(pick))
        return pick

    def person(self, cultures: list[str] | None = None) -> tuple[str, str, str]:
        culture = self.rng.choice(cultures or self.cultures)
        givens, surnames = N.PEOPLE[culture]
        surname = str(self.fresh(surnames))
        return str(self.rng.choice(givens)), surname, culture

    def word(self, pool: list[str]) -> str:
        return str(self.fresh(pool))

    def tail(self, kind: str) -> str:
        year = self.years.pop()
        return {
            PERSON: f"a {self.rng.choice(N.JOBS)} born in {year}",
            ORG: f"an organisation in {self.rng.choice(N.FIELDS)} founded in {year}",
            PLACE: f"a place first chartered in {year}",
            PRODUCT: f"a product line first sold in {year}",
            EVENT: f"an event first recorded in the {year} register",
        }.get(kind, f"a subject first written about in {year}")


def pick(g: Gen, patterns: list[list[list[str]]]) -> list[list[str]]:
    return g.rng.choice(patterns)


# --- alias habits: each returns the entity's canonical name, type and per-document steps -------------------
def title(g: Gen) -> Plan:
    given, sur, _ = g.person()
    short, bare, long = g.rng.choice(N.TITLES)
    full = f"{given} {sur}"
    return Plan(
        full,
        PERSON,
        pick(
            g,
            [
                [[f"{long} {full}", f"{short} {sur}"], [f"{short} {sur}"], [full]],
                [[f"{bare} {sur}"], [f"{short} {full}", f"{sur}"]],
                [[f"{short} {sur}"], [full]],
            ],
        ),
    )


def honorific(g: Gen) -> Plan:
    given, sur, _ = g.person()
    h = g.rng.choice(N.HONORIFICS)
    return Plan(f"{given} {sur}", PERSON, [[f"{given} {sur}", f"{h} {sur}"], [f"{h} {sur}"]])


def initials(g: Gen) -> Plan:
    given, sur, _ = g.person()
    mid = g.rng.choice("ABDEKLMRST")
    return Plan(
        f"{given} {mid}. {sur}",
        PERSON,
        pick(
            g,
            [
                [[f"{given} {mid}. {sur}"], [f"{given[0]}. {mid}. {sur}"]],
                [[f"{given[0]}.{mid}. {sur}"], [f"{given} {sur}"]],
                [[f"{sur}, {given[0]}. {mid}."], [f"{given} {mid}. {sur}"]],
            ],
        ),
    )


def surname_only(g: Gen) -> Plan:
    given, sur, _ = g.person()
    return Plan(f"{given} {sur}", PERSON, pick(g, [[[f"{given} {sur}", sur], [sur]], [[sur], [f"{given} {sur}"]]]))


def first_name(g: Gen) -> Plan:
    given, sur, _ = g.person()
    return Plan(f"{given} {sur}", PERSON, [[f"{given} {sur}", given, given], [f"{given} {sur}"]])


def nickname(g: Gen) -> Plan:
    formal, nick = g.fresh(N.NICKNAMES)  # type: ignore[misc]
    sur = g.word(N.NICK_SURNAMES)
    return Plan(
        f"{formal} {sur}",
        PERSON,
        pick(g, [[[f"{formal} {sur}"], [f"{nick} {sur}"]], [[f"{nick} {sur}", sur], [f"{formal} {sur}"]]]),
    )


def diacritics(g: Gen) -> Plan:
    for _ in range(50):
        given, sur, _ = g.person(["hispanic", "germanic"])
        if N.strip_accents(f"{given} {sur}") != f"{given} {sur}":
            break
    full = f"{given} {sur}"
    return Plan(full, PERSON, [[full], [N.strip_accents(full)]])


def transliteration(g: Gen) -> Plan:
    givens, surs = g.fresh(N.TRANSLIT_PEOPLE, key=lambda x: x[0][0])  # type: ignore[misc]
    forms = list(dict.fromkeys(f"{g.rng.choice(givens)} {g.rng.choice(surs)}" for _ in range(6)))[:3]
    if len(forms) < 2:
        forms.append(f"{givens[1]} {surs[-1]}")
    return Plan(forms[0], PERSON, [[f] for f in forms])


def name_order(g: Gen) -> Plan:
    given, sur, _ = g.person(["japanese", "chinese"])
    return Plan(
        f"{given} {sur}",
        PERSON,
        pick(g, [[[f"{sur} {given}"], [f"{given} {sur}"]], [[f"{sur.upper()} {given}"], [f"{given} {sur}"]]]),
    )


def possessive(g: Gen) -> Plan:
    given, sur, _ = g.person()
    return Plan(
        f"{given} {sur}",
        PERSON,
        pick(
            g, [[[f"{given} {sur}", f"{sur}'s"], [f"{given} {sur}'s"]], [[f"{given} {sur}\u2019s"], [f"{given} {sur}"]]]
        ),
    )


def legal_suffix(g: Gen) -> Plan:
    base = f"{g.word(N.ORG_ROOTS)} {g.rng.choice(N.ORG_TRADES)}"
    legal, other = g.rng.choice(N.LEGAL)
    forms = [f"{base} {legal}", *([f"{base} {other}"] if other else []), base]
    return Plan(forms[0], ORG, [[f] for f in forms])


def ampersand(g: Gen) -> Plan:
    a, b = g.word(N.PARTNER_SURNAMES), g.word(N.PARTNER_SURNAMES)
    trade = g.rng.choice(N.PARTNER_TRADES)
    return Plan(f"{a} & {b} {trade}", ORG, [[f"{a} & {b} {trade}"], [f"{a} and {b} {trade}"], [f"{a} & {b}"]])


def inversion_org(g: Gen) -> Plan:
    place, seat = g.word(N.PLACES), g.rng.choice([s for s in N.SEATS if " " not in s])
    return Plan(
        f"{seat} of {place}",
        ORG,
        pick(g, [[[f"{seat} of {place}"], [f"{place} {seat}"]], [[f"{place} {seat}"], [f"the {seat} of {place}"]]]),
    )


def agency(g: Gen) -> tuple[str, str]:
    while True:
        name = f"{g.rng.choice(N.AGENCY_ADJ)} {g.rng.choice(N.AGENCY_FIELD)} {g.rng.choice(N.AGENCY_BODY)}"
        short = N.initials(name)
        if name not in g.taken and short not in g.taken:
            g.taken |= {name, short}
            return name, short


def acronym_defined(g: Gen) -> Plan:
    name, short = agency(g)
    return Plan(name, ORG, [[f"{name}{DEF}{short}", short], [short]])


def acronym_undefined(g: Gen) -> Plan:
    name, short = agency(g)
    return Plan(name, ORG, pick(g, [[[name], [short]], [[short], [name], [short]]]))


def acronym_first(g: Gen) -> Plan:
    name, short = agency(g)
    return Plan(name, ORG, [[f"{short}{DEF}{name}", short], [name]])


def dotted(g: Gen) -> Plan:
    name, short = agency(g)
    dots = "".join(f"{c}." for c in short)
    return Plan(name, ORG, pick(g, [[[dots], [short], [name]], [[f"{name}{DEF}{dots}"], [short]]]))


def the_form(g: Gen) -> Plan:
    name = f"{g.word(N.ORG_ROOTS)} {g.rng.choice(['Foundation', 'Trust', 'Society', 'Collective'])}"
    return Plan(name, ORG, [[f"The {name}"], [name], [f"the {name}"]])


def plural(g: Gen) -> Plan:
    many, one = g.rng.choice(N.PLURALS)
    root = g.word(N.ORG_ROOTS)
    return Plan(
        f"{root} {many}",
        ORG,
        pick(g, [[[f"{root} {many}"], [f"{root} {one}"]], [[f"{root} {one}"], [f"{root} {many}"]]]),
    )


def root_alone(g: Gen) -> Plan:
    root = g.word(N.ORG_ROOTS)
    full = f"{root} {g.rng.choice(N.ORG_TRADES)} {g.rng.choice(['ASA', 'AG', 'Holdings', 'Group'])}"
    return Plan(full, ORG, pick(g, [[[full, root], [root]], [[root], [full]]]))


def hyphen_case(g: Gen) -> Plan:
    forms = list(g.fresh(N.HYPHENED_NAMES))  # type: ignore[call-overload]
    g.rng.shuffle(forms)
    return Plan(forms[0], ORG, [[f] for f in forms] + [[forms[0].upper()]])


def place_diacritics(g: Gen) -> Plan:
    place = g.word(N.DIACRITIC_PLACES)
    other = N.expand_umlauts(place) if g.rng.random() < 0.4 else N.strip_accents(place)
    return Plan(place, PLACE, [[place], [other]])


def place_transliteration(g: Gen) -> Plan:
    forms = g.fresh(N.TRANSLIT_PLACES, key=lambda x: x[0])
    return Plan(forms[0], PLACE, [[f] for f in forms])  # type: ignore[attr-defined]


def saint(g: Gen) -> Plan:
    name = g.word(N.SAINTS)
    return Plan(
        f"Saint {name}",
        PLACE,
        pick(g, [[[f"St. {name}"], [f"Saint {name}"]], [[f"St {name}"], [f"St. {name}"], [f"Saint {name}"]]]),
    )


def mount_river(g: Gen) -> Plan:
    place = g.word(N.PLACES)
    if g.rng.random() < 0.5:
        return Plan(f"Mount {place}", PLACE, [[f"Mount {place}"], [f"Mt. {place}"], [f"Mt {place}"]])
    return Plan(f"{place} River", PLACE, [[f"{place} River"], [f"River {place}"]])


def numeral(g: Gen) -> Plan:
    word, nth, roman, digit = g.rng.choice(N.ORDINALS[1:])
    plan = g.word(N.PROGRAMMES)
    return Plan(f"{word} {plan}", LAW, [[f"{word} {plan}"], [f"{nth} {plan}"], [f"{plan} {roman}"]])


def short_product(g: Gen) -> Plan:
    line, maker = g.word(N.PRODUCT_LINES), g.word(N.ORG_ROOTS)
    model = f"{g.rng.choice(N.PRODUCT_TAILS)} {g.rng.randint(2, 9)}".replace("X ", "X")
    return Plan(f"{maker} {line} {model}", PRODUCT, [[f"{maker} {line} {model}", line], [f"{line} {model}"], [line]])


def event_year(g: Gen) -> Plan:
    place, kind, year = g.word(N.PLACES), g.rng.choice(N.EVENTS), g.rng.randint(1995, 2024)
    return Plan(
        f"{year} {place} {kind}", EVENT, [[f"{year} {place} {kind}"], [f"{place} {kind} {year}"], [f"{place} {kind}"]]
    )


def inversion_event(g: Gen) -> Plan:
    place, kind = g.word(N.PLACES), g.rng.choice(N.INVERTED_EVENTS)
    return Plan(
        f"{kind} of {place}", EVENT, [[f"{kind} of {place}"], [f"{place} {kind}"], [f"{kind.lower()} of {place}"]]
    )


def law_year(g: Gen) -> Plan:
    topic, year = g.word(N.LAW_TOPICS), g.rng.randint(1960, 2022)
    act = f"{topic} Act"
    return Plan(
        f"{act} {year}",
        LAW,
        pick(
            g,
            [
                [[f"{act} {year}"], [f"{act} of {year}"], [act]],
                [[f"{act} {year}{DEF}{N.initials(act)}", N.initials(act)], [act]],
            ],
        ),
    )


def treaty(g: Gen) -> Plan:
    place, kind = g.word(N.PLACES), g.rng.choice(N.TREATY_KINDS)
    return Plan(f"{kind} of {place}", LAW, [[f"{kind} of {place}"], [f"{place} {kind}"]])


def term_abbrev(g: Gen) -> Plan:
    full, short, spellings = g.fresh(N.TERMS, key=lambda t: t[1])  # type: ignore[misc]
    return Plan(full, TERM, [[f"{full}{DEF}{short}", short], [short], [spellings[0]]])


def term_spelling(g: Gen) -> Plan:
    full, short, spellings = g.fresh(N.TERMS, key=lambda t: t[1])  # type: ignore[misc]
    return Plan(full, TERM, [[full], *[[s] for s in spellings[:2]]])


HABITS = {
    f.__name__: f
    for f in (
        title,
        honorific,
        initials,
        surname_only,
        first_name,
        nickname,
        diacritics,
        transliteration,
        name_order,
        possessive,
        legal_suffix,
        ampersand,
        inversion_org,
        acronym_defined,
        acronym_undefined,
        acronym_first,
        dotted,
        the_form,
        plural,
        root_alone,
        hyphen_case,
        place_diacritics,
        place_transliteration,
        saint,
        mount_river,
        numeral,
        short_product,
        event_year,
        inversion_event,
        law_year,
        treaty,
        term_abbrev,
        term_spelling,
    )
}
