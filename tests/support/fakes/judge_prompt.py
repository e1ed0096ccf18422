"""How a fake judge reads the entity-resolution judge's prompt (app/prompts/judge.py) as a model would: the names
listed once ("n3 Ngultrum | Concept | Ngultrum weakened."), then the numbered pairs of their ids ("2. n1 n3").
Each pair comes back whole, as {"pair": 2, "a": {"name", "type", "description"}, "b": {...}}."""

from __future__ import annotations

import re

_NAME = re.compile(r"^(n\d+) (.*?) \| (.*?) \| (.*)$")
_PAIR = re.compile(r"^(\d+)\. (n\d+) (n\d+)$")


def judge_pairs(content: str) -> list[dict]:
    names: dict[str, dict[str, str]] = {}
    pairs: list[dict] = []
    for line in content.splitlines():
        if found := _NAME.match(line):
            names[found[1]] = {"name": found[2], "type": found[3], "description": found[4]}
        elif found := _PAIR.match(line):
            pairs.append({"pair": int(found[1]), "a": names[found[2]], "b": names[found[3]]})
    return pairs
