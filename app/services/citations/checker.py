"""Claims and citations of one answer: its markers rewritten and resolved against the context, its sentences
checked against the context's passages (lexically, and by embedding similarity: one embedding call per
answer for the claims and their shortlisted passages; lexical only should that call fail)."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass

from app.domain.citation_check import Found, Similarity, Support, judge, shortlist
from app.domain.citation_markers import Mark, MarkerContext, rewrite_markers
from app.domain.citation_text import model_references_start
from app.domain.claim_split import ClaimSpan, split_claims
from app.domain.claim_support import Passage, passages
from app.domain.context_budget import ReferenceEntry
from app.domain.hits import ChunkHit
from app.providers.embeddings import EmbeddingClient

log = logging.getLogger(__name__)

MAX_EMBEDDED = 96  # texts in the one embedding request of an answer (claims first, then passages)


@dataclass(frozen=True)
class CitedSpan:
    chunk_id: str
    document_id: str
    file_path: str | None
    start: int
    end: int
    score: float


@dataclass(frozen=True)
class CheckedClaim:
    text: str
    start: int
    end: int
    support: Support
    citations: tuple[CitedSpan, ...]


@dataclass(frozen=True)
class CheckedAnswer:
    text: str  # markers rewritten as [n]; a references list the model wrote left out
    claims: tuple[CheckedClaim, ...]
    cited_documents: tuple[str, ...]  # reference ids of the documents cited (marks and citations), first use first


def marker_context(chunks: Sequence[ChunkHit], references: Sequence[ReferenceEntry]) -> MarkerContext:
    ref_of = {r.document_id: r.reference_id for r in references}
    return MarkerContext(
        chunk_documents=[ref_of.get(c.document_id, "") for c in chunks],
        reference_ids=frozenset(ref_of.values()),
    )


def _claim_of_marks(claims: Sequence[ClaimSpan], marks: Sequence[Mark]) -> list[list[Mark]]:
    """Each mark belongs to the last claim starting before it (markers follow what they support)."""
    owned: list[list[Mark]] = [[] for _ in claims]
    for mark in marks:
        index = max((i for i, c in enumerate(claims) if c.start <= mark.start), default=0)
        if claims:
            owned[index].append(mark)
    return owned


def _marked_chunks(
    claims: Sequence[ClaimSpan], marks: Sequence[Mark], chunk_documents: Sequence[str]
) -> list[set[int]]:
    """Per claim, the chunks its markers name: a chunk marker its chunk, a document marker the document's chunks."""
    chunks_of: dict[str, list[int]] = {}
    for i, document in enumerate(chunk_documents):
        chunks_of.setdefault(document, []).append(i)
    return [
        {
            *(i for m in own for i in m.chunks),
            *(i for m in own if not m.chunks for d in m.documents for i in chunks_of.get(d, [])),
        }
        for own in _claim_of_marks(claims, marks)
    ]


def _similarity_of(table: dict[tuple[int, Passage], float], claim: int) -> Similarity:
    return lambda p: table.get((claim, p))


def _cited_span(chunk: ChunkHit, found: Found) -> CitedSpan:
    p = found.passage
    return CitedSpan(chunk.id, chunk.document_id, chunk.file_path, p.start, p.end, found.score)


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


class CitationChecker:
    def __init__(self, embedder: EmbeddingClient) -> None:
        self.embedder = embedder

    async def check(self, raw: str, chunks: Sequence[ChunkHit], references: Sequence[ReferenceEntry]) -> CheckedAnswer:
        text, marks = rewrite_markers(raw, marker_context(chunks, references))
        cut = model_references_start(text)
        if cut is not None:
            text = text[:cut].rstrip()
            marks = [m for m in marks if m.end <= len(text)]
        spans = split_claims(text)
        if not spans or not chunks:
            return CheckedAnswer(text, (), _documents(marks, ()))
        ref_of = {r.document_id: r.reference_id for r in references}
        every = [p for i, c in enumerate(chunks) for p in passages(i, c.content)]
        claim_texts = [text[s.start : s.end] for s in spans]
        marked = _marked_chunks(spans, marks, [ref_of.get(c.document_id, "") for c in chunks])
        similarity = await self._similarities(
            claim_texts, [shortlist(t, every, m) for t, m in zip(claim_texts, marked, strict=True)]
        )
        claims = []
        for i, (span, claim_text) in enumerate(zip(spans, claim_texts, strict=True)):
            verdict = judge(claim_text, every, marked[i], _similarity_of(similarity, i))
            cited = tuple(_cited_span(chunks[f.passage.chunk], f) for f in verdict.cited)
            claims.append(CheckedClaim(claim_text, span.start, span.end, verdict.support, cited))
        cited_refs = [ref_of.get(c.document_id, "") for claim in claims for c in claim.citations]
        return CheckedAnswer(text, tuple(claims), _documents(marks, cited_refs))

    async def _similarities(
        self, claims: list[str], shortlists: list[list[Passage]]
    ) -> dict[tuple[int, Passage], float]:
        unique = list(dict.fromkeys(p for short in shortlists for p in short))[: max(0, MAX_EMBEDDED - len(claims))]
        if not unique:
            return {}
        try:
            vectors = await self.embedder.embed([*claims, *(p.text for p in unique)])
        except Exception as exc:  # noqa: BLE001 - any failure of the provider: the lexical check still answers
            log.warning("citation check without embeddings: %s", exc)
            return {}
        claim_vectors, passage_vectors = vectors[: len(claims)], dict(zip(unique, vectors[len(claims) :], strict=True))
        return {
            (i, p): _cosine(claim_vectors[i], passage_vectors[p])
            for i, short in enumerate(shortlists)
            for p in short
            if p in passage_vectors
        }


def _documents(marks: Sequence[Mark], cited: Sequence[str]) -> tuple[str, ...]:
    found = [d for m in marks for d in m.documents] + list(cited)
    return tuple(d for d in dict.fromkeys(found) if d)
