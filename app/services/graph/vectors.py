"""Embeddings for curation writes, made with no transaction open.

A curation write (edit, rename, merge, relation edits) changes texts whose vectors must be stored in the
same transaction. Calling the embedder there would hold the entity locks for as long as the provider
takes. Instead the caller predicts the texts it will write and `make`s their vectors first; under the
locks, `write` reads what the texts actually are after the write and stores the vectors it already has.
A text nobody predicted (a concurrent change came in between) makes `write` raise VectorsOutdated: the
caller rolls back, `make`s the missing vectors (again without a transaction) and tries once more. Only after
repeated misses does a caller embed under its locks, as deletion does (see docs/ARCHITECTURE.md)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TypeVar, cast

from sqlalchemy.ext.asyncio import AsyncConnection

from app.domain.rows import EntityText, RelationText
from app.domain.texts import entity_embedding_text, relation_embedding_text
from app.providers.embeddings import EmbeddingClient
from app.repositories import graph_curation as repo
from app.services.graph.embedding import embed_changed

Pair = tuple[str, str]
T = TypeVar("T")

# Attempts whose vectors were outdated under the locks before one embeds under them.
OUTSIDE_TRIES = 3


class VectorsOutdated(Exception):
    """A text to store has no vector made beforehand: roll the transaction back and try again."""


class _Missing(Exception):
    def __init__(self, texts: list[str]) -> None:
        super().__init__(f"{len(texts)} texts not embedded yet")
        self.texts = texts


class _FromKnown:
    """Stands in for the embedder inside a transaction: answers only texts embedded beforehand."""

    def __init__(self, known: dict[str, list[float]]) -> None:
        self.known = known

    async def embed(self, texts: list[str]) -> list[list[float]]:
        missing = [t for t in texts if t not in self.known]
        if missing:
            raise _Missing(missing)
        return [self.known[t] for t in texts]


class PreparedVectors:
    def __init__(self, embedder: EmbeddingClient) -> None:
        self.embedder = embedder
        self.known: dict[str, list[float]] = {}
        self.wanted: dict[str, None] = {}
        self.embedder_calls = 0

    def want_entity(self, name: str, description: str) -> None:
        self._want(entity_embedding_text(name, description))

    def want_relation(self, src_name: str, tgt_name: str, keywords: str, description: str) -> None:
        self._want(relation_embedding_text(src_name, tgt_name, keywords, description))

    def _want(self, text: str) -> None:
        if text not in self.known:
            self.wanted[text] = None

    async def make(self) -> None:
        """Embed the wanted texts; call with no transaction open."""
        texts, self.wanted = list(self.wanted), {}
        if texts:
            self.embedder_calls += 1
            self.known.update(zip(texts, await self.embedder.embed(texts), strict=True))

    async def write(
        self,
        conn: AsyncConnection,
        project_id: str,
        *,
        entity_keys: Sequence[str] = (),
        touching: Sequence[str] = (),
        pairs: Sequence[Pair] = (),
        embed_here: bool = False,
    ) -> None:
        """Store the vectors of the given entities, of every relation touching `touching` and of the given
        pairs, as they read now in the transaction, for those whose text changed. VectorsOutdated (nothing
        stored, the missing texts noted as wanted) when a vector is missing, unless `embed_here`: then the
        missing ones are embedded now, under the caller's locks."""
        ents = (await repo.get_entities(conn, project_id, list(entity_keys))).values()
        rels = {r.pair: r for r in await repo.relations_touching(conn, project_id, touching)}
        for row in await repo.relations_by_pairs(conn, project_id, [p for p in pairs if p not in rels]):
            rels[row.pair] = row
        ent_texts = [EntityText.of(r) for r in ents]
        rel_texts = [RelationText.of(r) for r in rels.values()]
        try:
            done = await self._changed(ent_texts, rel_texts)
        except _Missing as missing:
            for text in missing.texts:
                self._want(text)
            if not embed_here:
                raise VectorsOutdated from None
            await self.make()
            done = await self._changed(ent_texts, rel_texts)
        await repo.set_entity_embeddings(conn, project_id, done[0])
        await repo.set_relation_embeddings(conn, project_id, done[1])

    async def _changed(self, ents: Iterable[EntityText], rels: Iterable[RelationText]) -> tuple[list, list]:
        return await embed_changed(cast(EmbeddingClient, _FromKnown(self.known)), ents, rels)


async def write_with_vectors(
    vectors: PreparedVectors,
    locked: Callable[[], AbstractAsyncContextManager[AsyncConnection]],
    write: Callable[[AsyncConnection, bool], Awaitable[T]],
) -> T:
    """Run `write(conn, embed_here)` in a `locked()` transaction (gate.locked_keys, the gate held by the
    caller) after making the wanted vectors outside it, again while it raises VectorsOutdated; from the
    OUTSIDE_TRIES-th retry on with `embed_here` set."""
    retries = 0
    while True:
        await vectors.make()
        try:
            async with locked() as conn:
                return await write(conn, retries >= OUTSIDE_TRIES)
        except VectorsOutdated:
            retries += 1
