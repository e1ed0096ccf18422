"""The entity-resolution judge's prompt (ENTITY_RESOLUTION=llm): one call per document lists the names of the
pairs the rules could not settle, each once with its type and a one-line description, then the pairs by the
names' ids, and asks for a verdict per pair as JSON. The instructions come first and never change, so provider
prefix caching applies.
"""

from __future__ import annotations

from typing import Any

from app.domain.chat import Message
from app.domain.judge import JudgePair

JUDGE_SCHEMA_NAME = "entity_pair_verdicts"
JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdicts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "pair": {"type": "integer"},
                    "same": {"type": "boolean"},
                    "reason": {"type": "string"},
                },
                "required": ["pair", "same", "reason"],
            },
        }
    },
    "required": ["verdicts"],
}

_INSTRUCTIONS = """Find duplicate entities. "Names" lists id | name | type | what a document said of it. For each \
numbered pair of ids under "Pairs", is it one and the same real-world thing?

Same only when the descriptions support it: a short form, code, other word order or spelling, a former name. \
Different for related but distinct things (a company and its subsidiary, a town and its airport, two people \
sharing a surname) and when unsure: a wrong "same" joins two things for good.

Answer JSON only, one verdict per pair in order:
{"verdicts": [{"pair": <number>, "same": true or false, "reason": "<at most 8 words>"}]}"""


def _line(number: int, name: str, entity_type: str, description: str) -> str:
    plain = (" ".join(part.replace("|", "/").split()) for part in (name, entity_type))
    return f"n{number} " + " | ".join((*plain, description))


def judge_messages(pairs: list[JudgePair]) -> list[Message]:
    """The system instructions, then each name once (a name in two pairs is not described twice) and the pairs by
    the names' ids: a third of the tokens of the pairs written out whole, which count against ingestion's."""
    ids: dict[tuple[str, str], int] = {}
    names: list[str] = []
    listed: list[str] = []
    for number, p in enumerate(pairs, 1):
        sides = []
        for side in (
            (p.key, p.name, p.entity_type, p.description),
            (p.other, p.other_name, p.other_type, p.other_description),
        ):
            ident = (side[0], side[1])
            if ident not in ids:
                ids[ident] = len(ids) + 1
                names.append(_line(ids[ident], *side[1:]))
            sides.append(f"n{ids[ident]}")
        listed.append(f"{number}. {sides[0]} {sides[1]}")
    return [
        {"role": "system", "content": _INSTRUCTIONS},
        {"role": "user", "content": "Names:\n" + "\n".join(names) + "\nPairs:\n" + "\n".join(listed)},
    ]
