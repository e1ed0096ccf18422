"""A holdout alias world: prose documents naming real entities by their real alternative names, taken from data
none of the project's authors wrote (bench/data/alias_holdout/aliases.json: ISO 3166 and 4217 via pycountry,
US states via `us`, English nicknames via `nicknames`; see its SOURCE.md). Built blind to the resolution rules.

    build_holdout_world(seed, per_kind=3) -> BlindWorld   (the gold type of bench/alias_world_blind.py)

KINDS, one alias habit each, every form as the data spells it:
- country_official: the short and the official name ("Norway" / "Kingdom of Norway");
- country_common: the common name and the ISO or official name ("Vietnam" / "Viet Nam", "Syria" / "Syrian
  Arab Republic");
- code_defined: a country or currency with its ISO code given in parentheses in one document and the code
  alone in others ("Pound Sterling (GBP)" ... "GBP"), sometimes the bare code first;
- code_bare: the name in one document, the code alone in another, never defined (needs knowing the codes);
- former_name: a withdrawn ISO 3166-3 name of a renamed country and today's ("Upper Volta" / "Burkina Faso";
  needs knowing the history);
- state_ap: a US state and its AP abbreviation ("California" / "Calif.", "New Mexico" / "N.M.");
- nickname: a person by their given name and by one of its nicknames ("William Hale" / "Bill Hale").
NEGATIVES, pairs that must stay apart, chosen from the same data by a rule (never by hand):
- place_lookalike: two countries or US states whose names contain one another, start one another or are
  spelled alike (difflib ratio >= 0.8): Niger / Nigeria, Guinea / Equatorial Guinea, Sudan / South Sudan,
  Dominica / Dominican Republic, Austria / Australia, Mexico / New Mexico, Mali / Malawi;
- place_one_word_apart: two such names differing in one word each (North / South Dakota, United Kingdom /
  United States, Cook Islands / Cayman Islands);
- currency_lookalike: two currencies by either rule (Australian Dollar / Canadian Dollar, Sudanese Pound /
  South Sudanese Pound);
- shared_nickname: two people of one surname whose given names share a nickname (Albert / Herbert: "Bert"),
  each written in full.
Surnames are the only names written here (a neutral list); entities of one world never repeat a surname.
"""

from __future__ import annotations

import difflib
import json
import random
import re
from collections.abc import Callable
from functools import cache
from itertools import combinations
from pathlib import Path
from typing import Any

from bench.alias_blind_gold import BlindWorld, Document, Entity, Plan, PoolExhausted, Relation, Told
from bench.alias_world_blind import _forms, _place

DATA = Path(__file__).resolve().parent / "data" / "alias_holdout" / "aliases.json"
DEF = "\x1f"  # a step "A\x1fB" writes "A (B)": both forms are mentions (as in the blind world)
PLACE, CURRENCY, PERSON = "Location", "Concept", "Person"
# ISO 3166-3 entries that are one territory renamed (the others were split, merged into a larger state or are
# parts of one); the last two letters are today's alpha-2 code.
RENAMED = ("AIDJ", "BUMM", "DYBJ", "HVBF", "NHVU", "RHZW", "TPTL", "ZRCD")
SURNAMES = [
    "Ashdown",
    "Bellamy",
    "Brennan",
    "Calloway",
    "Carver",
    "Dalton",
    "Ellery",
    "Fairbanks",
    "Garrity",
    "Hadley",
    "Harlow",
    "Ingram",
    "Jessop",
    "Kendrick",
    "Langford",
    "Marlowe",
    "Mercer",
    "Northcott",
    "Oakes",
    "Pemberton",
    "Quarry",
    "Radcliffe",
    "Sheldon",
    "Thorne",
    "Upton",
    "Vickers",
    "Wakefield",
    "Whitlock",
    "Yardley",
    "Aldridge",
    "Bracken",
    "Colby",
    "Draper",
    "Everly",
    "Fenwick",
    "Gilmore",
    "Holloway",
    "Kirby",
    "Lockwood",
    "Merriman",
]
TOPICS = (
    "trade",
    "fisheries",
    "public health",
    "rail transport",
    "water supply",
    "tourism",
    "energy policy",
    "schooling",
)


@cache
def load_aliases() -> dict[str, Any]:
    return json.loads(DATA.read_text(encoding="utf-8"))


# --- the data, read as entities with forms -----------------------------------------------------------------
def _plain(name: str | None) -> str | None:
    return name if name and "," not in name and "(" not in name else None  # "Korea, Republic of" is a list entry


def country_forms(c: dict[str, str]) -> dict[str, str]:
    """short / official / iso / code forms a writer would use, each only when it differs from the short one."""
    short = c.get("common_name") or _plain(c["name"]) or _plain(c.get("official_name"))
    if not short:
        return {}
    forms = {"short": short, "code": c["alpha_3"]}
    for key, value in (("official", _plain(c.get("official_name"))), ("iso", _plain(c["name"]))):
        if value and value != short:
            forms[key] = value
    return forms


def places() -> list[tuple[str, dict[str, str]]]:
    """(key, forms) of every country with a short name and every US state."""
    data = load_aliases()
    out = [(f"c:{c['alpha_3']}", country_forms(c)) for c in data["countries"]]
    out += [(f"s:{s['postal']}", {"short": s["name"], "code": s["postal"], "ap": s["ap"]}) for s in data["us_states"]]
    return [(k, f) for k, f in out if f]


def _words(name: str) -> list[str]:
    return [w for w in re.findall(r"\w+", name.casefold()) if w not in {"and", "of", "the"}]


def spelled_alike(a: str, b: str) -> bool:
    """One name inside or at the start of the other, or the two spelled alike (difflib ratio >= 0.8)."""
    la, lb = a.casefold(), b.casefold()
    if la == lb:
        return False
    if re.search(rf"(?<!\w){re.escape(la)}(?!\w)", lb) or re.search(rf"(?<!\w){re.escape(lb)}(?!\w)", la):
        return True
    if la.startswith(lb) or lb.startswith(la):
        return True
    return min(len(a), len(b)) >= 4 and difflib.SequenceMatcher(None, la, lb).ratio() >= 0.8


def one_word_apart(a: str, b: str) -> bool:
    """Two names of two words or more that differ in exactly one word each ("North Dakota" / "South Dakota")."""
    wa, wb = _words(a), _words(b)
    return len(wa) == len(wb) >= 2 and sum(x != y for x, y in zip(wa, wb, strict=True)) == 1


@cache
def place_pairs(alike: Callable[[str, str], bool]) -> tuple[tuple[str, str], ...]:
    named = places()
    return tuple((ka, kb) for (ka, fa), (kb, fb) in combinations(named, 2) if alike(fa["short"], fb["short"]))


@cache
def currency_pairs() -> tuple[tuple[str, str], ...]:
    cur = load_aliases()["currencies"]
    return tuple(
        (a["alpha_3"], b["alpha_3"])
        for a, b in combinations(cur, 2)
        if spelled_alike(a["name"], b["name"]) or one_word_apart(a["name"], b["name"])
    )


@cache
def shared_nicknames() -> tuple[tuple[str, str, str], ...]:
    """(nickname, given a, given b) for two given names sharing a nickname that neither is itself, and neither of
    which is the other's nickname: the list makes "Beth" a nickname of "Elizabeth" (and the other way), so "Beth
    Brennan" beside "Elizabeth Brennan" is the `nickname` kind's own alias, not two people any reader could
    tell apart (489 of the 3,407 triples were such pairs; seed 82 drew one)."""
    nicknames = load_aliases()["nicknames"]
    by_nick: dict[str, list[str]] = {}
    for given, nicks in nicknames.items():
        for nick in nicks:
            by_nick.setdefault(nick, []).append(given)
    return tuple(
        (n, a, b)
        for n, gs in sorted(by_nick.items())
        for a, b in combinations(sorted(gs), 2)
        if n not in gs and a not in nicknames.get(b, ()) and b not in nicknames.get(a, ())
    )


# --- the world's choices -----------------------------------------------------------------------------------------
class Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.taken: set[str] = set()
        self.years = self.rng.sample(range(1201, 2024), 600)

    def fresh(self, options: list[Any], keys: Callable[[Any], tuple[str, ...]]) -> Any:
        free = [o for o in options if not self.taken & set(keys(o))]
        if not free:
            raise PoolExhausted("alias data exhausted: lower --per-kind")
        pick = self.rng.choice(free)
        self.taken |= set(keys(pick))
        return pick

    def surname(self) -> str:
        return str(self.fresh(list(SURNAMES), lambda s: (f"sur:{s}",)))

    def tail(self, kind: str) -> str:
        year = self.years.pop()
        return {
            PLACE: f"a place whose records begin in {year}",
            CURRENCY: f"a currency first quoted in {year}",
            PERSON: f"a {self.rng.choice(('surveyor', 'economist', 'archivist', 'engineer'))} born in {year}",
        }[kind]

    def steps(self, patterns: list[list[list[str]]]) -> list[list[str]]:
        return self.rng.choice(patterns)


def _place_with(g: Gen, need: tuple[str, ...], prefix: str = "") -> dict[str, str]:
    """A place not used yet (`prefix` "c:" for countries, "s:" for US states) whose forms include `need`."""
    pool = [p for p in places() if p[0].startswith(prefix) and all(k in p[1] for k in need)]
    _, forms = g.fresh(pool, lambda p: (p[0], p[1]["short"]))
    return forms


def country_official(g: Gen) -> Plan:
    f = _place_with(g, ("official",))
    s, o = f["short"], f["official"]
    return Plan(s, PLACE, g.steps([[[o, s], [s]], [[s], [o]], [[o], [s], [s]]]))


def country_common(g: Gen) -> Plan:
    countries = [c for c in load_aliases()["countries"] if "common_name" in c]
    pool = [(f"c:{c['alpha_3']}", f) for c in countries if {"iso", "official"} & (f := country_forms(c)).keys()]
    _, f = g.fresh(pool, lambda p: (p[0], p[1]["short"]))
    other = f.get("iso") or f["official"]
    return Plan(f["short"], PLACE, g.steps([[[other], [f["short"]]], [[f["short"]], [other]]]))


def _named_code(g: Gen) -> tuple[str, str, str]:
    """(name, code, type) of a country or a currency (US postal codes are left out: IN, OR, ME, OK read as words)."""
    if g.rng.random() < 0.5:
        cur = g.fresh(load_aliases()["currencies"], lambda c: (f"cur:{c['alpha_3']}",))
        return cur["name"], cur["alpha_3"], CURRENCY
    f = _place_with(g, ("code",), "c:")
    return f["short"], f["code"], PLACE


def code_defined(g: Gen) -> Plan:
    name, code, kind = _named_code(g)
    both = f"{name}{DEF}{code}"
    return Plan(name, kind, g.steps([[[both, code], [code]], [[code], [both]], [[name], [both, code]]]))


def code_bare(g: Gen) -> Plan:
    name, code, kind = _named_code(g)
    return Plan(name, kind, g.steps([[[name], [code]], [[code], [name]], [[name], [code], [name]]]))


def former_name(g: Gen) -> Plan:
    data = load_aliases()
    now = {c["alpha_2"]: country_forms(c) for c in data["countries"]}
    pool = [
        (w["name"].split(",")[0], now[w["alpha_4"][2:]])
        for w in data["withdrawn_countries"]
        if w["alpha_4"] in RENAMED and now.get(w["alpha_4"][2:])
    ]
    old, f = g.fresh(pool, lambda p: (f"c:{p[1]['code']}", p[1]["short"]))
    return Plan(f["short"], PLACE, g.steps([[[old], [f["short"]]], [[f["short"]], [old]]]))


def state_ap(g: Gen) -> Plan:
    pool = [p for p in places() if p[0].startswith("s:") and p[1]["ap"] != p[1]["short"]]
    _, f = g.fresh(pool, lambda p: (p[0], p[1]["short"]))
    s, ap = f["short"], f["ap"]
    return Plan(s, PLACE, g.steps([[[s], [ap]], [[ap], [s]], [[s, ap], [ap]]]))


def nickname(g: Gen) -> Plan:
    """A given name of four letters or more and one of its nicknames, shorter than it (a diminutive)."""
    pool = [(given, n) for given, nicks in load_aliases()["nicknames"].items() for n in nicks if len(n) < len(given)]
    given, nick = g.rng.choice([p for p in pool if len(p[0]) >= 4])
    sur = g.surname()
    full, short = f"{given.title()} {sur}", f"{nick.title()} {sur}"
    return Plan(full, PERSON, g.steps([[[full], [short]], [[short], [full]], [[full, sur], [short]]]))


KINDS: dict[str, Callable[[Gen], Plan]] = {
    f.__name__: f for f in (country_official, country_common, code_defined, code_bare, former_name, state_ap, nickname)
}


def _place_plan(g: Gen, key: str) -> Plan:
    f = dict(places())[key]
    second = f.get("official") or f.get("iso")
    uses = [[f["short"]], [second]] if second and g.rng.random() < 0.5 else [[f["short"]], [f["short"]]]
    return Plan(f["short"], PLACE, uses)


def _pair_keys(pair: tuple[str, str]) -> tuple[str, ...]:
    named = dict(places())
    return (*pair, *(named[k]["short"] for k in pair))  # a key and its name: "Georgia" is a country and a state


def place_lookalike(g: Gen) -> list[Plan]:
    a, b = g.fresh(list(place_pairs(spelled_alike)), _pair_keys)
    return [_place_plan(g, a), _place_plan(g, b)]


def place_one_word_apart(g: Gen) -> list[Plan]:
    a, b = g.fresh(list(place_pairs(one_word_apart)), _pair_keys)
    return [_place_plan(g, a), _place_plan(g, b)]


def currency_lookalike(g: Gen) -> list[Plan]:
    names = {c["alpha_3"]: c["name"] for c in load_aliases()["currencies"]}
    a, b = g.fresh(list(currency_pairs()), lambda p: (f"cur:{p[0]}", f"cur:{p[1]}"))
    return [Plan(names[a], CURRENCY, [[names[a]], [names[a]]]), Plan(names[b], CURRENCY, [[names[b]]])]


def shared_nickname(g: Gen) -> list[Plan]:
    _, a, b = g.rng.choice(shared_nicknames())
    sur = g.surname()
    return [Plan(f"{x.title()} {sur}", PERSON, [[f"{x.title()} {sur}"], [f"{x.title()} {sur}"]]) for x in (a, b)]


NEGATIVES: dict[str, Callable[[Gen], list[Plan]]] = {
    f.__name__: f for f in (place_lookalike, place_one_word_apart, currency_lookalike, shared_nickname)
}


# --- prose ---------------------------------------------------------------------------------------------------------
START = {
    PLACE: [
        "{x} reported steady growth in {topic}.",
        "{x} hosted a regional meeting on {topic}.",
        "{x} signed a new agreement on {topic}.",
    ],
    CURRENCY: ["{x} weakened against most major currencies.", "{x} held steady through the quarter."],
    PERSON: ["{x} spoke at length about {topic}.", "{x} has worked on {topic} for many years."],
}
MID = {
    PLACE: [
        "Delegates from {x} raised concerns about {topic}.",
        "Officials in {x} expect the figures to improve.",
        "The survey singles out {x} for its progress on {topic}.",
    ],
    CURRENCY: [
        "Most contracts in {topic} were priced in {x}.",
        "Traders expect {x} to recover by the summer.",
        "Importers said the fall of {x} raised their costs.",
    ],
    PERSON: [
        "According to {x}, the results were better than expected.",
        "The committee invited {x} to review the plan.",
        "Colleagues describe {x} as careful and patient.",
    ],
}
FOLLOW = {
    PLACE: ["Its statistics office publishes the series every spring.", "Roads there are often closed in winter."],
    CURRENCY: ["Its exchange rate is fixed each morning.", "Analysts disagree on where it goes next."],
    PERSON: ["Their early work was in {topic}.", "Former colleagues recall long field trips and short reports."],
}
LINKS = [
    ("The review linked {a} with {b}.", "link, review"),
    ("Reports on {topic} connect {a} to {b}.", "connection, reporting"),
    ("Observers compared {a} with {b} at some length.", "comparison"),
    ("A joint statement named both {a} and {b}.", "joint statement"),
]


def _sentence(g: Gen, step: str, entity: Entity, topic: str) -> str:
    form, *defined = step.split(DEF)
    x = form + (f" ({defined[0]})" if defined else "")
    pool = (START if g.rng.random() < 0.5 else MID)[entity.type]
    return g.rng.choice(pool).format(x=x, topic=topic).replace("..", ".")


def _write(g: Gen, seed: int, n: int, uses: list[tuple[str, list[str]]], world: BlindWorld) -> Document:
    topic = g.rng.choice(TOPICS)
    first: list[str] = []
    later: list[str] = []
    told: list[Told] = []
    for eid, steps in uses:
        entity = world.entities[eid]
        first.append(_sentence(g, steps[0], entity, topic))
        if g.rng.random() < 0.6:
            first[-1] += " " + g.rng.choice(FOLLOW[entity.type]).format(topic=topic)
        later += [_sentence(g, step, entity, topic) for step in steps[1:]]
    for (ea, sa), (eb, sb) in zip(uses, uses[1:], strict=False):
        a, b = g.rng.choice(_forms(sa)), g.rng.choice(_forms(sb))
        template, keywords = g.rng.choice(LINKS)
        sentence = template.format(a=a, b=b, topic=topic).replace("..", ".")
        rid = f"r{len(world.relations)}"
        world.relations[rid] = Relation(ea, eb, keywords)
        told.append(Told(a, b, rid, sentence))
        (later if g.rng.random() < 0.5 else first).append(sentence)
    body = first + later
    paragraphs = [" ".join(body[i : i + 4]) for i in range(0, len(body), 4)]
    head = f"Briefing {seed}.{n}: notes on {topic} for the country desk."
    mentions = {f: eid for eid, steps in uses for f in _forms(steps)}
    return Document(f"holdout-{seed}-{n:02d}", "\n\n".join([head, *paragraphs]), mentions, told)


def build_holdout_world(seed: int, per_kind: int = 3, negatives_per_kind: int | None = None) -> BlindWorld:
    g = Gen(seed)
    world = BlindWorld(seed, {}, [], {}, [])
    groups: list[list[tuple[str, list[str]]]] = []

    def register(plan: Plan, kind: str) -> str:
        eid = f"e{len(world.entities)}"
        world.entities[eid] = Entity(eid, plan.name, plan.type, g.tail(plan.type), kind)
        return eid

    for kind, make in KINDS.items():
        for _ in range(per_kind):
            plan = make(g)
            eid = register(plan, kind)
            groups += [[(eid, steps)] for steps in plan.uses]
    for kind, pair in NEGATIVES.items():
        for _ in range(per_kind if negatives_per_kind is None else negatives_per_kind):
            plans = pair(g)
            ids = [register(p, f"neg:{kind}") for p in plans]
            world.negatives += [(a, b, kind) for a, b in combinations(ids, 2)]
            together = g.rng.random() < 0.5  # half of the pairs meet in one document
            if together:
                groups.append([(eid, p.uses[0]) for eid, p in zip(ids, plans, strict=True)])
            groups += [[(eid, steps)] for eid, p in zip(ids, plans, strict=True) for steps in p.uses[together:]]
    g.rng.shuffle(groups)
    size = max(4, sum(len(gr) for gr in groups) // 6)
    for uses in _place(groups, world.entities, g, size):  # type: ignore[arg-type]
        if uses:
            world.documents.append(_write(g, seed, len(world.documents) + 1, uses, world))
    return world
