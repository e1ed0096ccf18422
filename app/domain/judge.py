"""The LLM judge of entity resolution (pure part): the pairs the rules leave open, and the verdicts read from
whatever the model answered.

A pair is open when the rules found a candidate they may not accept on their own: several entities fit a
short form, an acronym's initials or a near spelling; a person's name differs from another only by an initial;
or the two names match once normalised but their types differ. Pairs the confusable guard keeps apart are
never opened (app/domain/name_variants.py), and the resolver checks the guard again before it applies a
verdict, so no answer of the model can join them.

Answers are parsed leniently: fenced JSON, prose around it, a bare list, broken JSON (json-repair), "same" as a
boolean or as a word. A verdict naming no pair, a pair out of range, or two verdicts disagreeing on one pair
count as no verdict: the names stay apart.

The judge's answer must not depend on which of two names arrived first: a pair is shown the same way round
whichever side is the document's (`facing`: the smaller key first), and a settled pair's verdict is kept under
the unordered pair (`verdict_text` / `read_verdict`), so the pair asked again from either side gets the same
answer without another call.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import json_repair

from app.domain.chat import strip_think

_DESCRIPTION_CHARS = 120
_SENTENCE_END = re.compile(r"(?<=[a-z0-9)][.!?])\s+(?=[A-Z])")
_FIRST_SENTENCE_CHARS = 24  # a shorter "sentence" is more likely an abbreviation's point ("Dr. Okafor")
_REASON_CHARS = 200
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_SAME_WORDS = frozenset({"same", "yes", "true", "identical", "duplicate", "match"})
_DIFFERENT_WORDS = frozenset({"different", "no", "false", "distinct", "apart", "not same", "not_same"})


@dataclass(frozen=True)
class JudgePair:
    """A name of the document (`key`) and an entity it may name (`other`), as the judge is shown them."""

    key: str
    name: str
    entity_type: str
    description: str
    other: str
    other_name: str
    other_type: str
    other_description: str

    def turned(self) -> JudgePair:
        """The same question with its sides swapped."""
        return JudgePair(
            self.other,
            self.other_name,
            self.other_type,
            self.other_description,
            self.key,
            self.name,
            self.entity_type,
            self.description,
        )

    def facing(self) -> JudgePair:
        """The pair as the judge is shown it: the side of the smaller key first, whichever is the document's."""
        return self if self.key <= self.other else self.turned()


@dataclass(frozen=True)
class Verdict:
    same: bool
    reason: str


def verdict_text(verdict: Verdict) -> str:
    """A settled pair's verdict as kept in the response cache."""
    return json.dumps({"same": verdict.same, "reason": verdict.reason}, ensure_ascii=False)


def read_verdict(text: str) -> Verdict | None:
    """A kept verdict read back (None if it is not one)."""
    try:
        item = json.loads(text)
    except ValueError:
        return None
    if not isinstance(item, dict) or not isinstance(item.get("same"), bool):
        return None
    return Verdict(item["same"], str(item.get("reason") or "")[:_REASON_CHARS])


def one_line(description: str) -> str:
    """The first sentence of a description, cut to a short sentence's length: what the entity is comes first, and
    every token of it is paid for on each document's judge call."""
    line = " ".join((description or "").split())
    end = next((m.start() for m in _SENTENCE_END.finditer(line) if m.start() >= _FIRST_SENTENCE_CHARS), len(line))
    line = line[:end]
    return line if len(line) <= _DESCRIPTION_CHARS else line[: _DESCRIPTION_CHARS - 1].rstrip() + "…"


def _payload(text: str) -> Any:
    text = strip_think(text or "").strip()
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return None
    text = text[min(starts) :]
    try:
        return json.JSONDecoder().raw_decode(text)[0]  # the first value; prose after it is ignored
    except ValueError:
        pass
    try:
        return json_repair.loads(text)
    except Exception:  # json-repair gives up on some inputs with an exception of its own
        return None


def _items(payload: Any) -> list[Any]:
    if isinstance(payload, dict):
        for field in ("verdicts", "pairs", "results", "answers"):
            if isinstance(payload.get(field), list):
                return list(payload[field])
        return [payload] if "pair" in payload else []
    return list(payload) if isinstance(payload, list) else []


def _number(item: dict) -> int | None:
    for field in ("pair", "index", "id", "number"):
        value = item.get(field)
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            return value
        if isinstance(value, str) and value.strip().isdigit():
            return int(value.strip())
    return None


def _same(item: dict) -> bool | None:
    for field in ("same", "verdict", "answer", "decision"):
        value = item.get(field)
        if isinstance(value, bool):
            return value
        if isinstance(value, str):
            word = value.strip().lower()
            if word in _SAME_WORDS:
                return True
            if word in _DIFFERENT_WORDS:
                return False
    return None


def parse_verdicts(text: str, count: int) -> dict[int, Verdict]:
    """Pair number (1-based, as the prompt lists them) → verdict, for the pairs the answer settles."""
    found: dict[int, Verdict] = {}
    conflicting: set[int] = set()
    for item in _items(_payload(text)):
        if not isinstance(item, dict):
            continue
        number, same = _number(item), _same(item)
        if number is None or same is None or not 1 <= number <= count:
            continue
        reason = " ".join(str(item.get("reason") or "").split())[:_REASON_CHARS]
        if number in found and found[number].same != same:
            conflicting.add(number)
        found.setdefault(number, Verdict(same, reason))
    return {n: v for n, v in found.items() if n not in conflicting}
