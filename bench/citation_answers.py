"""The citation bench's answering model: it answers from the context as a citing model would, in messy
Markdown, and adds sentences with a deliberately invented fact, remembering which is which.

Faithful sentences are the world's stating sentences found in the context chunks (half of them reworded:
"collaborated with" for "worked with", "In 1994, X led" for "Records from 1994 show that X led", …), cited in
the forms models
use: `[c3]`, `(c3)`, `【c3】`, `[^n]`/`[n]` (a document), a marker alone on its line, a marker naming the wrong
chunk, an invented marker (`[c99]`), or none. An invented sentence is another stating sentence of the context
with one fact swapped — its year, another number, or a name (for one named elsewhere in the context) — and
the marker of the chunk it came from.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from typing import Any

FAITHFUL_PER_ANSWER = 4
INVENTED_PER_ANSWER = 2
_YEAR = re.compile(r"\b(1[89]\d\d|20\d\d)\b")
_NUMBER = re.compile(r"\b\d+\b")
_REWORDINGS = [  # a model's own wording of a stating sentence (the facts stay)
    (re.compile(r"^Records from (\d+) show that (.+?) led (.+)$"), r"In \1, \2 led \3"),
    (re.compile(r" worked with "), " collaborated with "),
    (re.compile(r" signed a "), " concluded a "),
    (re.compile(r" announced a "), " made public a "),
    (re.compile(r" joined (.+?) in a (.+?) that lasted (\d+) years"), r" and \1 shared a \2 for \3 years"),
]


@dataclass(frozen=True)
class Written:
    text: str  # the sentence as the claim will read it (no marker, no Markdown)
    invented: str | None  # "date" | "number" | "name" | None (faithful)
    facts: tuple[str, ...]  # what a citation of a faithful sentence must contain: its numbers and names


@dataclass
class CitingModel:
    world: Any
    seed: int = 7
    written: dict[str, list[Written]] = field(default_factory=dict)  # by question

    def __post_init__(self) -> None:
        self.told = {t.sentence: t for d in self.world.documents for t in d.told}

    def answer(self, messages: list[dict]) -> str:
        question = messages[-1]["content"]
        chunks = [json.loads(line) for line in messages[0]["content"].splitlines() if line.startswith('{"id": "c')]
        found = [(c, t) for c in chunks for s, t in self.told.items() if s in c["content"]]
        unique = list({t.sentence: (c, t) for c, t in found}.values())
        rng = random.Random(f"{self.seed}:{question}")
        rng.shuffle(unique)
        faithful = unique[:FAITHFUL_PER_ANSWER]
        invent_from = unique[FAITHFUL_PER_ANSWER : FAITHFUL_PER_ANSWER + INVENTED_PER_ANSWER]
        forms = sorted({f for _, t in found for f in (t.a, t.b)})
        lines = ["### What the documents say", ""]
        written: list[Written] = []
        for i, (chunk, told) in enumerate(faithful):
            names = (told.a, told.b)
            facts = tuple(_NUMBER.findall(told.sentence)) + names
            sentence = _reworded(told.sentence) if rng.random() < 0.5 else told.sentence
            written.append(Written(sentence, None, facts))
            lines.append(_cited(sentence, chunk, chunks, i, names))
        for i, (chunk, told) in enumerate(invent_from):
            kind = ("date", "number", "name")[i % 3 if i else rng.randrange(3)]
            changed = _swap(told, kind, forms, rng)
            if changed is None:
                continue
            written.append(Written(changed, kind, ()))
            lines.append(_cited(changed, chunk, chunks, 0, ()))
        rng.shuffle(lines[2:])  # interleave invented and faithful sentences
        self.written[question] = written
        if rng.random() < 0.3:
            lines += ["", "### References", "- [1] somewhere.txt"]
        return "\n".join(lines)


def _reworded(sentence: str) -> str:
    for pattern, replacement in _REWORDINGS:
        sentence = pattern.sub(replacement, sentence)
    return sentence


def _cited(sentence: str, chunk: dict, chunks: list[dict], style: int, names: tuple[str, ...]) -> str:
    key = chunk["id"]
    other = next((c["id"] for c in chunks if c["id"] != key), key)
    if names and style % 2:
        sentence = sentence.replace(names[0], f"**{names[0]}**", 1)
    marker = [
        f" [{key}]",
        f" ({key})",
        f"【{key}】",
        f"\n[{key}]\n",
        f" [^{chunk['reference_id']}]",
        f" [{other}]",  # the wrong chunk: re-attributed by the check
        " [c99]",  # a chunk that does not exist: dropped, re-attributed
        "",
    ][style % 8]
    bullet = "- " if style % 3 == 1 else ""
    if marker.startswith(" ") and sentence.endswith("."):
        return f"{bullet}{sentence[:-1]}{marker}."
    return f"{bullet}{sentence}{marker}"


def _swap(told: Any, kind: str, forms: list[str], rng: random.Random) -> str | None:
    sentence = told.sentence
    if kind == "name":
        others = [f for f in forms if f not in sentence and told.b not in f and f not in told.b]
        return sentence.replace(told.b, rng.choice(others), 1) if others else _swap(told, "date", forms, rng)
    years = _YEAR.findall(sentence)
    numbers = [n for n in _NUMBER.findall(sentence) if n not in years]
    if kind == "number" and numbers:
        old = numbers[0]
        new = str(int(old) + rng.randint(2, 9))
        return re.sub(rf"\b{old}\b", new, sentence, count=1)
    if years:
        old = years[0]
        new = str(int(old) + rng.choice([-3, -2, -1, 1, 2, 3]))
        return re.sub(rf"\b{old}\b", new, sentence, count=1)
    return None
