"""Can the shape of two given names alone tell a nickname from another person's name? (issue 33)

    .venv/bin/python -m bench.nickname_shape_bench [--examples 25]

The question: the confusable guard keeps "two given names beside one surname" apart, so a nickname the service
does not know ("Cathy Thorne" / "Cathleen Thorne") stays a second node. A STRUCTURAL rule, with no name table,
would read the short name as a piece of three letters or more of the long one (its start, or inside it where a
syllable starts: a consonant), plus at most a diminutive ending ("y", "ie", "i", "ey", "o", "a", "ya"; the
consonant before it may be doubled: "Rollo", "Gussie"), the short name six letters at most, the long one losing
three letters or more after a prefix (two for a piece inside it). `shortened` below is that rule, with the knobs
the variants turn; it lives here, not in the service.

The gold is data nobody here wrote: the English given names and their nicknames of the `nicknames` package
(`bench/data/alias_holdout/aliases.json`, its `has_nickname` rows; see SOURCE.md), used only as labels:
- related: every (nickname, given name) pair it lists (recall counts them);
- unrelated, two canonical names: two given names it lists as names of their own, neither listed as the other's
  nickname ("Eric" / "Erica", "Julie" / "Julian"): the people the guard must keep apart;
- unrelated, any: any two names it spells (nicknames too) not listed together. Noisier: the list is incomplete
  ("Jeremy" is not listed for "Jeremiah"), so part of these are nicknames the list forgot.
Pairs are cut in two halves by the long name's first letter (a-m: where the variants were looked at; n-z:
measured only). Only pairs sharing three letters are scored (a rule needing a piece of three cannot fire on
others; the unrelated totals count all pairs). The service's own rule (`name_nicknames.nickname_pair`: common
diminutives and clipped non-census names) is scored the same way as the baseline.

Result (2026-11-27, `python -m bench.nickname_shape_bench`): recall is related pairs fired (a-m + n-z of 2,553);
precision is related fired over all fired, and against two canonical names only (the cleaner negatives):

    rule                                         recall    precision  (canonical)  unrelated canonical fired
    service today (nickname_pair)                 113       0.665      0.966          4 (wilhelm/wilhelmina)
    broad: any ending, prefix or inside           931       0.328      0.719        364 (187 of 1,564 sharing a prefix)
    prefix only                                   616       0.411      0.767        187
    diminutive ending required                    423       0.264      0.663        215
    diminutive ending, prefix only                303       0.356      0.727        114
    piece of 4+, any ending                       483       0.508      0.800        121
    piece of 4+, diminutive ending, prefix         98       0.495      0.817         22 (harry/harriet, henry/henrietta)

The halves agree (broad: a-m 35%, n-z 41% of related pairs fired). No variant comes near precision 1.0: the
shape that makes "Cathy" Cathleen's makes "Harry" Harriet's, "Mary" Martin's, "Julie" Julian's, "Angela"
Angelica's and "Ada" Adaline's (on the holdout world, seeds 26-29, the broad rule merged the shared-nickname
negative "Ada Ashdown" / "Adaline Ashdown"). Telling them apart takes knowing the names (which are one name,
which sex), the LLM judge's knowledge, so the rule stays out of the service.

Tried in the service once, not committed (`nickname_pair` also accepting the shape; holdout seeds 26-29, seen,
`python -m bench.alias_holdout_bench --seeds 26 27 28 29 --per-kind 3 --orders 1`, rules only): main's nickname
12/12 split, 0/48 over-merged; broad shape 2/12 split, 1/48 over-merged (Ada / Adaline); "piece of 4+,
diminutive ending, prefix" 9/12 split, 0/48 over-merged (the holdout has no Harry / Harriet pair to catch it).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from itertools import combinations

from bench.alias_world_holdout import load_aliases

ENDINGS = ("ie", "ey", "ya", "y", "i", "o", "a", "")  # longest first
DIMINUTIVE_ENDINGS = ("ie", "ey", "ya", "y", "i", "o")
MAX_SHORT = 6
VOWELS = "aeiouy"
# the brief's examples: holdout fresh 26-29 and blind fresh nicknames left split (Sasha is no piece of Alexander)
TARGETS = [
    ("cathy", "cathleen"),
    ("johny", "johnathan"),
    ("merci", "mercedes"),
    ("rollo", "roland"),
    ("tavia", "octavia"),
    ("gussie", "augustina"),
    ("lena", "arlene"),
    ("katya", "ekaterina"),
]
# pairs the issue names as two people
DANGERS = [("eric", "erica"), ("daniel", "danielle"), ("paul", "paula"), ("jan", "janet"), ("christopher", "christina")]


@dataclass(frozen=True)
class Shape:
    """One variant of the rule: which endings, whether a piece inside the long name counts, the shortest piece."""

    endings: tuple[str, ...] = ENDINGS
    inside: bool = True
    min_stem: int = 3

    def pieces(self, short: str) -> Iterable[tuple[str, str]]:
        for ending in self.endings:
            if not short.endswith(ending):
                continue
            stem = short[: len(short) - len(ending)]
            yield stem, ending
            if ending and len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in VOWELS:
                yield stem[:-1], ending  # "Rollo", "Gussie": the consonant doubled before the ending


def _inside(stem: str, formal: str) -> bool:
    """`stem` inside `formal`, starting with a consonant, where a syllable may start ("Tavia" in "Octavia")."""
    return formal.find(stem, 1) > 0 and stem[0] not in VOWELS and len(formal) - len(stem) >= 2


def shortened(short: str, formal: str, shape: Shape = Shape()) -> bool:
    """`short` reads as a short form of `formal` by its letters alone (module docstring)."""
    if not 3 <= len(short) <= MAX_SHORT or len(formal) <= len(short) or not short.isalpha():
        return False
    for stem, ending in shape.pieces(short):
        if len(stem) < shape.min_stem:
            continue
        if formal.startswith(stem):
            if len(formal) - len(stem) >= 3:
                return True
        elif shape.inside and _inside(stem, formal) and (ending or len(stem) >= 4):
            return True  # a bare three-letter piece inside ("Don" in "Brandon") says too little
    return False


VARIANTS: dict[str, Shape] = {
    "broad: any ending, prefix or inside": Shape(),
    "prefix only": Shape(inside=False),
    "diminutive ending required": Shape(endings=DIMINUTIVE_ENDINGS),
    "diminutive ending, prefix only": Shape(endings=DIMINUTIVE_ENDINGS, inside=False),
    "piece of 4+, any ending": Shape(min_stem=4),
    "piece of 4+, diminutive ending, prefix": Shape(endings=DIMINUTIVE_ENDINGS, inside=False, min_stem=4),
}


def _by_shape(short: str, formal: str, shape: Shape) -> bool:
    return shortened(short, formal, shape)


def either_way(rule: Callable[[str, str], bool]) -> Callable[[str, str], bool]:
    return lambda a, b: rule(a, b) or rule(b, a)


@dataclass
class Score:
    related: dict[str, list[int]] = field(default_factory=lambda: {"a-m": [0, 0], "n-z": [0, 0]})
    unrelated: dict[str, list[int]] = field(default_factory=lambda: {"canonical": [0, 0], "any": [0, 0]})
    shared_prefix: dict[str, list[int]] = field(default_factory=lambda: {"canonical": [0, 0], "any": [0, 0]})
    fired_canonical: list[tuple[str, str]] = field(default_factory=list)

    def precision(self, unrelated: str = "any") -> float:
        """Related pairs fired over all pairs fired, the unrelated ones of `unrelated` ("any" holds "canonical")."""
        hits = sum(fired for fired, _ in self.related.values())
        wrong = self.unrelated[unrelated][0]
        return hits / (hits + wrong) if hits + wrong else 1.0


@dataclass(frozen=True)
class Gold:
    canonical: frozenset[str]
    related: frozenset[frozenset[str]]

    @property
    def names(self) -> list[str]:
        return sorted(self.canonical | {n for pair in self.related for n in pair})


def load_gold(nicknames: dict[str, list[str]] | None = None) -> Gold:
    data = load_aliases()["nicknames"] if nicknames is None else nicknames
    related = frozenset(frozenset((nick, given)) for given, nicks in data.items() for nick in nicks if nick != given)
    return Gold(frozenset(data), related)


def _sharing_three_letters(names: list[str]) -> set[tuple[str, str]]:
    by_trigram: dict[str, set[str]] = {}
    for name in names:
        for i in range(len(name) - 2):
            by_trigram.setdefault(name[i : i + 3], set()).add(name)
    pairs: set[tuple[str, str]] = set()
    for group in by_trigram.values():
        pairs |= {(a, b) for a, b in combinations(sorted(group), 2)}
    return pairs


def score(fires: Callable[[str, str], bool], gold: Gold) -> Score:
    out = Score()
    for pair in gold.related:
        a, b = sorted(pair)
        half = out.related["a-m" if max(a, b, key=len)[0] <= "m" else "n-z"]
        half[0] += fires(a, b)
        half[1] += 1
    names = gold.names
    total_any, total_canonical = (
        len(names) * (len(names) - 1) // 2,
        len(gold.canonical) * (len(gold.canonical) - 1) // 2,
    )
    out.unrelated["any"][1] = total_any - len(gold.related)
    out.unrelated["canonical"][1] = total_canonical - sum(pair <= gold.canonical for pair in gold.related)
    for a, b in sorted(_sharing_three_letters(names)):
        if frozenset((a, b)) in gold.related:
            continue
        kinds = ["any", "canonical"] if a in gold.canonical and b in gold.canonical else ["any"]
        fired, prefix = fires(a, b), a[:3] == b[:3]
        for kind in kinds:
            out.unrelated[kind][0] += fired
            out.shared_prefix[kind][0] += fired and prefix
            out.shared_prefix[kind][1] += prefix
        if fired and len(kinds) == 2:
            out.fired_canonical.append((a, b))
    return out


def _row(name: str, s: Score, fires: Callable[[str, str], bool]) -> str:
    rel = " ".join(f"{k} {f}/{n}" for k, (f, n) in s.related.items())
    unrel = " ".join(f"{k} {f}/{n}" for k, (f, n) in s.unrelated.items())
    pre = " ".join(f"{k} {f}/{n}" for k, (f, n) in s.shared_prefix.items())
    targets = sum(fires(a, b) for a, b in TARGETS)
    dangers = [f"{a}/{b}" for a, b in DANGERS if fires(a, b)]
    return (
        f"{name}\n  related fired {rel} | unrelated fired {unrel} | of them sharing a 3-letter prefix {pre}\n"
        f"  precision {s.precision():.3f} (against canonical pairs only {s.precision('canonical'):.3f})"
        f" | targets {targets}/{len(TARGETS)} | issue's dangers fired {dangers or 'none'}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=25, help="unrelated canonical pairs to show per variant")
    args = parser.parse_args(argv)
    from app.domain.name_nicknames import nickname_pair  # the service's rule, scored as the baseline

    gold = load_gold()
    rules: dict[str, Callable[[str, str], bool]] = {"service today (nickname_pair)": nickname_pair}
    rules |= {name: either_way(partial(_by_shape, shape=shape)) for name, shape in VARIANTS.items()}
    for name, fires in rules.items():
        s = score(fires, gold)
        print(_row(name, s, fires))
        print("  e.g. " + ", ".join(f"{a}/{b}" for a, b in s.fired_canonical[: args.examples]))


if __name__ == "__main__":
    main()
