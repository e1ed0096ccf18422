"""Token budgets and context rendering (reference 8.4, 8.6, 8.7).

Entity and relation lists are cut to their token budgets (whole items). The chunk budget is what is left
of max_total_tokens after the system prompt, the query, the conversation history (which the official
implementation forgets — weakness 8) and the graph context. Descriptions are shown with `readable()`,
fragments on separate lines, never raw `<SEP>` (weakness 10).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from app.domain.texts import readable
from app.prompts.answer import CHUNK_SECTION, ENTITY_SECTION, REFERENCE_SECTION, RELATION_SECTION
from app.providers.llm import Message
from app.providers.tokenizer import Tokenizer
from app.services.retrieval import ChunkHit, EntityHit, RelationHit

T = TypeVar("T")

MESSAGE_OVERHEAD = 4   # chat-format tokens around each message
REPLY_OVERHEAD = 3     # tokens priming the assistant reply
CHUNK_MARGIN = 200     # official safety margin kept free when sizing the chunk list


def _json(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=False)


def entity_line(e: EntityHit) -> str:
    return _json({"entity": e.name, "type": e.entity_type, "description": readable(e.description)})


def relation_line(r: RelationHit) -> str:
    return _json({"entity1": r.src_name, "entity2": r.tgt_name, "keywords": r.keywords,
                  "description": readable(r.description)})


def chunk_line(reference_id: str, c: ChunkHit) -> str:
    return _json({"reference_id": reference_id, "content": c.content})


def messages_tokens(tokenizer: Tokenizer, messages: Sequence[Message]) -> int:
    """What a request with these messages costs, counted the way budgets are checked."""
    return sum(tokenizer.count(m["content"]) + MESSAGE_OVERHEAD for m in messages) + REPLY_OVERHEAD


def truncate_by_tokens(items: Sequence[T], line: Callable[[T], str], max_tokens: int, tok: Tokenizer) -> list[T]:
    """Longest prefix whose lines joined by newlines fit `max_tokens`, verified by re-encoding."""
    kept: list[T] = []
    total = 0
    for item in items:
        cost = tok.count(line(item)) + 1
        if total + cost > max_tokens:
            break
        kept.append(item)
        total += cost
    while kept and tok.count("\n".join(line(i) for i in kept)) > max_tokens:
        kept.pop()
    return kept


@dataclass
class ReferenceEntry:
    reference_id: str
    document_id: str
    file_path: str | None

    @property
    def label(self) -> str:
        return self.file_path or self.document_id


def build_references(chunks: Sequence[ChunkHit]) -> list[ReferenceEntry]:
    """One reference per document, most-cited first, then first appearance; ids "1", "2", …"""
    counts = Counter(c.document_id for c in chunks)
    first: dict[str, ChunkHit] = {}
    for c in chunks:
        first.setdefault(c.document_id, c)
    order = sorted(first, key=lambda d: -counts[d])  # stable: ties keep first appearance
    return [ReferenceEntry(str(i + 1), d, first[d].file_path) for i, d in enumerate(order)]


def _fenced(label: str, lines: list[str], lang: str = "json") -> str:
    body = "\n".join(lines)
    return f"{label}\n\n```{lang}\n{body}\n```"


def render_context(
    entities: Sequence[EntityHit] | None,
    relations: Sequence[RelationHit] | None,
    chunks: Sequence[ChunkHit],
) -> tuple[str, list[ReferenceEntry]]:
    """The context block. `entities`/`relations` None → naive layout (chunks and references only)."""
    references = build_references(chunks)
    ref_of = {r.document_id: r.reference_id for r in references}
    sections: list[str] = []
    if entities is not None:
        sections.append(_fenced(ENTITY_SECTION, [entity_line(e) for e in entities]))
    if relations is not None:
        sections.append(_fenced(RELATION_SECTION, [relation_line(r) for r in relations]))
    sections.append(_fenced(CHUNK_SECTION, [chunk_line(ref_of[c.document_id], c) for c in chunks]))
    sections.append(_fenced(REFERENCE_SECTION, [f"[{r.reference_id}] {r.label}" for r in references], ""))
    return "\n\n".join(sections), references


def fit_chunks(chunks: Sequence[ChunkHit], budget: int, tok: Tokenizer) -> list[ChunkHit]:
    """Longest prefix of chunks whose rendered chunk + reference sections fit `budget` tokens."""
    kept: list[ChunkHit] = []
    total = 0
    for c in chunks:
        cost = tok.count(chunk_line("99", c)) + 12  # line + a possible reference-list line
        if total + cost > budget:
            break
        kept.append(c)
        total += cost
    return kept


def trim_history(history: list[Message], turns: int | None) -> list[Message]:
    """The last `turns` user turns with what followed them (None = everything)."""
    if turns is None:
        return list(history)
    if turns == 0:
        return []
    user_positions = [i for i, m in enumerate(history) if m["role"] == "user"]
    if len(user_positions) <= turns:
        return list(history)
    return history[user_positions[-turns]:]


def fit_history(history: list[Message], fixed_tokens: int, max_total: int, tok: Tokenizer) -> list[Message]:
    """Drop the oldest messages until fixed parts + history fit `max_total`."""
    kept = list(history)
    costs = [tok.count(m["content"]) + MESSAGE_OVERHEAD for m in kept]
    total = fixed_tokens + sum(costs)
    while kept and total > max_total:
        total -= costs.pop(0)
        kept.pop(0)
    return kept
