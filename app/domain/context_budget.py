"""Token budgets and context rendering.

Entity and relation lists are cut to their token budgets (whole items). The chunk budget is what is left
of max_total_tokens after the system prompt, the query, the conversation history (official LightRAG
leaves it out of the count) and the graph context. Descriptions are shown with `readable()`,
fragments on separate lines, never raw `<SEP>`.

Counting is exact but cheap: the context is built from segments that each end with a newline and are
followed by a segment starting with a non-space character. tiktoken's pre-tokenizer never lets a piece
cross such a boundary, so the token count of the whole equals the sum of the segments' counts, and each
segment (an entity, relation or chunk line) is encoded once per request however often budgets are checked.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

from app.domain.chat import Message
from app.domain.hits import ChunkHit, EntityHit, RelationHit
from app.domain.texts import readable
from app.domain.tokens import Tokenizer
from app.prompts.answer import CHUNK_SECTION, ENTITY_SECTION, REFERENCE_SECTION, RELATION_SECTION

T = TypeVar("T")

MESSAGE_OVERHEAD = 4  # chat-format tokens around each message
REPLY_OVERHEAD = 3  # tokens priming the assistant reply
CHUNK_MARGIN = 200  # official safety margin kept free when sizing the chunk list
_FENCE_END = "```\n\n"


# One encoder for every line: json.dumps with a non-default option builds a new encoder per call, which cost
# more than encoding a short entity or relation line (a query renders a few hundred). Same output.
_ENCODER = json.JSONEncoder(ensure_ascii=False)


def _json(obj: dict) -> str:
    return _ENCODER.encode(obj)


def entity_line(e: EntityHit) -> str:
    return _json({"entity": e.name, "type": e.entity_type, "description": readable(e.description)})


def relation_line(r: RelationHit) -> str:
    return _json(
        {"entity1": r.src_name, "entity2": r.tgt_name, "keywords": r.keywords, "description": readable(r.description)}
    )


def chunk_key(position: int) -> str:
    """The short id a chunk has in the context (0-based position → "c1", "c2", …): what answers cite."""
    return f"c{position + 1}"


def chunk_line(reference_id: str, key: str, c: ChunkHit) -> str:
    return _json({"id": key, "reference_id": reference_id, "content": c.content})


@lru_cache
def _digits_single_tokens(tok: Tokenizer) -> bool:
    return all(len(tok.encode(str(n))) == 1 for n in range(1000))


def _hard_boundary(left: str, right: str) -> bool:
    return left.endswith("\n") and bool(right) and not right[0].isspace() and right[0] != "/"


class _CountCache:
    """Process-wide LRU of token counts keyed by a digest of the text (a short one by the text itself): the same
    chunk or entity line is encoded once, not on every query that retrieves it (counts are exact; only the work
    is saved)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[object, int] = OrderedDict()

    def get(self, tok: Tokenizer, text: str) -> int:
        key: object
        if len(text) < _SHORT:  # a short text is its own key: a digest would cost more than the lookup
            key = (tok.name, text)
        else:
            key = hashlib.blake2b(f"{tok.name}\0{text}".encode(), digest_size=16).digest()
        found = self._data.get(key)
        if found is None:
            found = self._data[key] = tok.count(text)
            if len(self._data) > self.size:
                self._data.popitem(last=False)
        else:
            self._data.move_to_end(key)
        return found


_SHARED_COUNTS = _CountCache(50_000)
# Shorter texts (entity and relation lines, mostly) are kept as they are, longer ones by digest, each kind in
# its own cache (a query counts ~8 short lines per chunk: they would push the chunks' costly counts out). The
# same hub's lines come back query after query, and encoding one cost ~25 us against ~1 us for the lookup.
_SHORT_COUNTS = _CountCache(20_000)
_SHORT = 256


class TokenLedger:
    """Per-request token counts, cached by text, with exact sums over hard segment boundaries."""

    def __init__(self, tok: Tokenizer) -> None:
        self.tok = tok
        self._counts: dict[str, int] = {}
        self._lines: dict[tuple[int, int], tuple[object, str]] = {}
        self._chunk_lines: dict[tuple[str, str, int], tuple[ChunkHit, str]] = {}

    def line(self, render: Callable[[T], str], item: T) -> str:
        """`render(item) + "\n"`, rendered once per item and request (the item is kept, so its id stays valid)."""
        key = (id(render), id(item))
        found = self._lines.get(key)
        if found is None:
            found = self._lines[key] = (item, render(item) + "\n")
        return found[1]

    def count(self, text: str) -> int:
        found = self._counts.get(text)
        if found is None:
            found = (_SHORT_COUNTS if len(text) < _SHORT else _SHARED_COUNTS).get(self.tok, text)
            self._counts[text] = found
        return found

    def joined(self, segments: Sequence[str]) -> int:
        """Exact token count of "".join(segments)."""
        if all(_hard_boundary(a, b) for a, b in zip(segments, segments[1:], strict=False)):
            return sum(self.count(s) for s in segments)
        return self.tok.count("".join(segments))

    def chunk_segment(self, reference_id: str, key: str, c: ChunkHit) -> str:
        """The chunk's context line; its count is taken from the line with reference "1" and id "c1" when every
        1-3 digit number is one token (the digits are then a piece of their own), so a chunk is encoded once."""
        cache_key = (reference_id, key, id(c))
        found = self._chunk_lines.get(cache_key)
        if found is not None:  # a query renders its context several times while fitting it: one line each
            return found[1]
        segment = chunk_line(reference_id, key, c) + "\n"
        self._chunk_lines[cache_key] = (c, segment)  # the chunk is kept, so its id stays valid
        short = len(reference_id) <= 3 and len(key) <= 4
        if segment not in self._counts and short and _digits_single_tokens(self.tok):
            first = segment if (reference_id, key) == ("1", "c1") else self.chunk_segment("1", "c1", c)
            self._counts[segment] = self.count(first)
        return segment

    def messages(self, messages: Sequence[Message], system_segments: Sequence[str] | None = None) -> int:
        """What a request costs, counted the way budgets are checked; `system_segments` = the first
        message's content as segments (so its context lines come from the cache)."""
        total = REPLY_OVERHEAD
        for i, m in enumerate(messages):
            if i == 0 and system_segments is not None:
                total += self.joined(system_segments) + MESSAGE_OVERHEAD
            else:
                total += self.count(m["content"]) + MESSAGE_OVERHEAD
        return total


def messages_tokens(tok: Tokenizer, messages: Sequence[Message]) -> int:
    """Exact cost of a request's messages (used by tests to check what was really sent)."""
    return sum(tok.count(m["content"]) + MESSAGE_OVERHEAD for m in messages) + REPLY_OVERHEAD


def truncate_by_tokens(items: Sequence[T], line: Callable[[T], str], max_tokens: int, ledger: TokenLedger) -> list[T]:
    """Longest prefix whose newline-terminated lines fit `max_tokens` (whole items only)."""
    kept: list[T] = []
    total = 0
    for item in items:
        total += ledger.count(ledger.line(line, item))
        if total > max_tokens:
            break
        kept.append(item)
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


def _section(label: str, lines: list[str], lang: str = "json") -> list[str]:
    return [f"{label}\n\n```{lang}\n", *lines]


def render_context(
    entities: Sequence[EntityHit] | None,
    relations: Sequence[RelationHit] | None,
    chunks: Sequence[ChunkHit],
    ledger: TokenLedger,
) -> tuple[list[str], list[ReferenceEntry]]:
    """The context block as segments ("".join them). `entities`/`relations` None → naive layout."""
    references = build_references(chunks)
    ref_of = {r.document_id: r.reference_id for r in references}
    parts: list[list[str]] = []
    if entities is not None:
        parts.append(_section(ENTITY_SECTION, [ledger.line(entity_line, e) for e in entities]))
    if relations is not None:
        parts.append(_section(RELATION_SECTION, [ledger.line(relation_line, r) for r in relations]))
    parts.append(
        _section(
            CHUNK_SECTION, [ledger.chunk_segment(ref_of[c.document_id], chunk_key(i), c) for i, c in enumerate(chunks)]
        )
    )
    parts.append(_section(REFERENCE_SECTION, [f"[{r.reference_id}] {r.label}\n" for r in references], ""))
    segments: list[str] = []
    for i, part in enumerate(parts):
        segments += part
        segments.append(_FENCE_END if i < len(parts) - 1 else "```")
    return segments, references


def chunk_cost(c: ChunkHit, ledger: TokenLedger) -> int:
    """What a chunk costs `fit_chunks`: its line and a possible reference-list line."""
    return ledger.count(ledger.chunk_segment("1", "c1", c)) + 12


def fit_chunks(chunks: Sequence[ChunkHit], budget: int, ledger: TokenLedger) -> list[ChunkHit]:
    """Longest prefix of chunks whose lines (and a reference-list line each) fit `budget` tokens."""
    kept: list[ChunkHit] = []
    total = 0
    for c in chunks:
        total += chunk_cost(c, ledger)
        if total > budget:
            break
        kept.append(c)
    return kept


def yield_to_chunks(
    entities: list[EntityHit], relations: list[RelationHit], shortfall: int, ledger: TokenLedger
) -> tuple[list[EntityHit], list[RelationHit]]:
    """The entities and relations left once the lowest-ranked relations, then entities, have given up at least
    `shortfall` tokens (all of them when they hold fewer). A chunk is the source text the graph's lines were
    drawn from: under a tight total budget, the chunks asked for are worth more than the graph's weakest lines,
    while the graph's best lines (its leads, named entities' edges, asked themes) come first and stay."""
    freed = 0
    relations, entities = list(relations), list(entities)
    while freed < shortfall and relations:
        freed += ledger.count(ledger.line(relation_line, relations.pop()))
    while freed < shortfall and entities:
        freed += ledger.count(ledger.line(entity_line, entities.pop()))
    return entities, relations


def trim_history(history: list[Message], turns: int | None) -> list[Message]:
    """The last `turns` user turns with what followed them (None = everything)."""
    if turns is None:
        return list(history)
    if turns == 0:
        return []
    user_positions = [i for i, m in enumerate(history) if m["role"] == "user"]
    if len(user_positions) <= turns:
        return list(history)
    return history[user_positions[-turns] :]


def fit_history(history: list[Message], fixed_tokens: int, max_total: int, ledger: TokenLedger) -> list[Message]:
    """Drop the oldest messages until fixed parts + history fit `max_total`."""
    kept = list(history)
    costs = [ledger.count(m["content"]) + MESSAGE_OVERHEAD for m in kept]
    total = fixed_tokens + sum(costs)
    while kept and total > max_total:
        total -= costs.pop(0)
        kept.pop(0)
    return kept
