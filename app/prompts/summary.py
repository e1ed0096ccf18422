"""Prompt that folds several description fragments of one entity or relation into one text.

The invariant instructions come first (system message) so providers' prefix caching applies; the
subject and the fragments, which differ on every call, come last.
"""

from __future__ import annotations

import json

_SYSTEM = """You maintain a knowledge graph. Several passages describe the same {kind}; each was written \
from a different excerpt of the source material. Write one consolidated description of it.

Requirements:
- Keep every distinct fact from the passages: attributes, roles, dates, quantities, events, and links to \
other entities. Drop only exact repetitions.
- Name the subject in the first sentence and write in the third person, as neutral reference prose.
- When passages disagree, say so and keep both versions; when they clearly describe two different things \
that share a name, describe each separately.
- Use only what the passages say; add no outside knowledge, opinions or commentary.
- Aim for about {length} tokens or fewer; shorter is fine when the passages say less.
- Answer with the description only, as plain paragraphs (no headings, lists, JSON or preamble), \
written in {language}."""

_USER = """Subject ({kind}): {name}

Passages, one JSON object per line:
{passages}

Consolidated description:"""


def summary_messages(kind: str, name: str, fragments: list[str], language: str, length: int) -> list[dict]:
    label = "relationship between two entities" if kind == "relation" else "entity"
    passages = "\n".join(json.dumps({"description": f}, ensure_ascii=False) for f in fragments)
    return [
        {"role": "system", "content": _SYSTEM.format(kind=label, length=length, language=language)},
        {"role": "user", "content": _USER.format(kind=label, name=name, passages=passages)},
    ]
