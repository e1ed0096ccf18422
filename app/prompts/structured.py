"""Extraction and keyword prompts for JSON-schema structured outputs (EXTRACTION_FORMAT=json).

The extraction rules and worked examples are those of the record format (app/prompts/extraction.py); only
the output section and the examples' answers are written as JSON. The answers parse into the same records
(`app.domain.extraction_json` reads them) and merge exactly like record answers.
"""

from __future__ import annotations

import json
import re
from typing import Any

from app.domain.chat import Message, strip_think
from app.domain.extraction_parser import parse_extraction
from app.domain.names import normalize_type
from app.prompts.extraction import COMPLETION_DELIMITER, neutralize_markers, system_prompt

EXTRACTION_SCHEMA_NAME = "knowledge_graph_records"
KEYWORDS_SCHEMA_NAME = "query_keywords"

_TEXT = {"type": "string"}
EXTRACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "entities": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": _TEXT, "type": _TEXT, "description": _TEXT},
                "required": ["name", "type", "description"],
            },
        },
        "relationships": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"source": _TEXT, "target": _TEXT, "keywords": _TEXT, "description": _TEXT},
                "required": ["source", "target", "keywords", "description"],
            },
        },
    },
    "required": ["entities", "relationships"],
}
KEYWORDS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "high_level_keywords": {"type": "array", "items": _TEXT},
        "low_level_keywords": {"type": "array", "items": _TEXT},
    },
    "required": ["high_level_keywords", "low_level_keywords"],
}

_OUTPUT_SECTION = re.compile(r"Output format \(.*?\n(?=Language\n)", re.DOTALL)
_EXAMPLE_ANSWER = re.compile(r"Records:\n(.*?)" + re.escape(COMPLETION_DELIMITER), re.DOTALL)
_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n?|\n?```\s*$")
_BACKTICKS = re.compile(r"`{3,}")

_JSON_OUTPUT = """Output format (a program reads it, so follow it exactly)
- Answer with one JSON object: {"entities": [...], "relationships": [...]}.
- Each entity: {"name": ..., "type": ..., "description": ...}.
- Each relationship: {"source": <entity name>, "target": <entity name>, "keywords": <comma-separated \
phrases>, "description": ...}.
- At most 40 entities and 100 records in total. Nothing outside the JSON object.
- A passage that names nothing: {"entities": [], "relationships": []}.

"""

_USER = """Extract the entities and relations from the passage below, following the rules of the \
instructions. Answer in {language} with the JSON object only.

Passage:
{fence}text
{chunk}
{fence}"""

_GLEAN = """Read the passage again. Some entities or relations may be missing from your answer. Answer with \
one JSON object of the same shape that holds ONLY the missing entities and relationships; do not repeat \
the ones you already gave. If nothing is missing: {"entities": [], "relationships": []}."""

_CORRECTIVE = """Your answer could not be read. Answer again with one JSON object only, exactly of this \
shape: {"entities": [{"name": ..., "type": ..., "description": ...}], "relationships": [{"source": ..., \
"target": ..., "keywords": ..., "description": ...}]}. No other text."""


def records_as_json(records_text: str, entity_types: list[str]) -> str:
    """Record lines as the JSON answer that says the same."""
    parsed = parse_extraction(records_text + "\n" + COMPLETION_DELIMITER, "example", None)
    spelled = {normalize_type(t): t for t in entity_types}
    return json.dumps(
        {
            "entities": [
                {
                    "name": e.name,
                    "type": spelled.get(e.entity_type, e.entity_type.title()),
                    "description": e.description,
                }
                for e in parsed.entities
            ],
            "relationships": [
                {
                    "source": r.src_name,
                    "target": r.tgt_name,
                    "keywords": ", ".join(r.keywords),
                    "description": r.description,
                }
                for r in parsed.relations
            ],
        },
        ensure_ascii=False,
    )


def json_system_prompt(entity_types: list[str], language: str) -> str:
    prompt = _OUTPUT_SECTION.sub(lambda _: _JSON_OUTPUT, system_prompt(entity_types, language), count=1)
    return _EXAMPLE_ANSWER.sub(lambda m: "JSON:\n" + records_as_json(m.group(1), entity_types), prompt)


def json_extraction_messages(chunk: str, entity_types: list[str], language: str) -> list[Message]:
    chunk = neutralize_markers(chunk)
    longest = max((len(run) for run in _BACKTICKS.findall(chunk)), default=2)
    fence = "`" * max(3, longest + 1)
    return [
        {"role": "system", "content": json_system_prompt(entity_types, language)},
        {"role": "user", "content": _USER.format(language=language, fence=fence, chunk=chunk)},
    ]


def json_gleaning_messages(first_messages: list[Message], first_answer: str) -> list[Message]:
    return [*first_messages, {"role": "assistant", "content": first_answer}, {"role": "user", "content": _GLEAN}]


def json_corrective_messages(first_messages: list[Message], unusable_answer: str) -> list[Message]:
    return [
        *first_messages,
        {"role": "assistant", "content": unusable_answer},
        {"role": "user", "content": _CORRECTIVE},
    ]


def is_json_extraction_answer(text: str) -> bool:
    """The answer is one well-formed JSON object with an entity or relationship list: like the completion
    marker of the record format, it says the model finished (also when the lists are empty)."""
    body = _FENCE.sub("", strip_think(text or "").strip())
    try:
        data = json.loads(body)
    except ValueError:
        return False
    return isinstance(data, dict) and any(isinstance(data.get(key), list) for key in ("entities", "relationships"))
