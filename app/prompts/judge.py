"""The entity-resolution judge's prompt (ENTITY_RESOLUTION=llm): one call per document lists the pairs of names
the rules could not settle, each name with its type and a one-line description, and asks for a verdict per
pair as JSON. The instructions come first and never change, so provider prefix caching applies.
"""

from __future__ import annotations

import json
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

_INSTRUCTIONS = """You check a knowledge graph for duplicate entities. Each numbered pair below holds two \
names found in documents, with the type and a short description the extraction gave each. Decide for every \
pair whether both names refer to one and the same real-world thing (a person, organisation, place, event, \
product or concept).

Say same only when the descriptions support it: a short form, an abbreviation, a different word order or a \
spelling variant of one name. Say different when they are related but distinct things (a company and its \
subsidiary, a town and the airport named after it, two people sharing a surname), and when the text does not \
let you tell. A wrong "same" joins two things for good; a wrong "different" only leaves a duplicate.

Answer with one JSON object and nothing else:
{"verdicts": [{"pair": <number>, "same": true or false, "reason": "<at most 15 words>"}]}
one verdict per pair, in the order given."""


def _side(name: str, entity_type: str, description: str) -> dict[str, str]:
    return {"name": name, "type": entity_type, "description": description}


def judge_messages(pairs: list[JudgePair]) -> list[Message]:
    listed = [
        {
            "pair": number,
            "a": _side(p.name, p.entity_type, p.description),
            "b": _side(p.other_name, p.other_type, p.other_description),
        }
        for number, p in enumerate(pairs, 1)
    ]
    return [
        {"role": "system", "content": _INSTRUCTIONS},
        # compact: indentation cost a third of the pairs' tokens, and the judge's tokens count against ingestion's
        {"role": "user", "content": json.dumps(listed, ensure_ascii=False, separators=(",", ":"))},
    ]
