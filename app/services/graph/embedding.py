"""Which entities and relations need a new embedding, and their vectors, in one batched call.

Texts come from app/domain/texts.py; an item whose stored `embedded_hash` equals the hash of its current
text is left out, so unchanged items cost nothing. Callers write the vectors their own way (the pipeline
compare-and-set, curation inside its edit transaction, deletion into its plan).
"""

from __future__ import annotations

from collections.abc import Iterable

from app.domain.rows import EntityEmbeddingUpdate, EntityText, RelationEmbeddingUpdate, RelationText
from app.domain.texts import entity_embedding_text, relation_embedding_text, text_hash
from app.providers.embeddings import EmbeddingClient


async def embed_changed(
    embedder: EmbeddingClient,
    entities: Iterable[EntityText],
    relations: Iterable[RelationText],
    refused: list[str] | None = None,
) -> tuple[list[EntityEmbeddingUpdate], list[RelationEmbeddingUpdate]]:
    """The changed items with their new vectors, in the order given: the only place embedding updates are
    built. With a `refused` list, an item whose text the endpoint refuses is left out (its stored vector
    and hash stay, so it is embedded again when next touched) and described in `refused`; the others are
    embedded all the same. Without, any refusal fails the call."""
    ent_todo = [(e, entity_embedding_text(e.name, e.description)) for e in entities]
    ent_todo = [(e, body) for e, body in ent_todo if e.embedded_hash != text_hash(body)]
    rel_todo = [(r, relation_embedding_text(r.src_name, r.tgt_name, r.keywords, r.description)) for r in relations]
    rel_todo = [(r, body) for r, body in rel_todo if r.embedded_hash != text_hash(body)]
    if not ent_todo and not rel_todo:
        return [], []
    texts = [body for _, body in ent_todo] + [body for _, body in rel_todo]
    if refused is None:
        vectors: list[list[float] | None] = list(await embedder.embed(texts))
    else:
        each = await embedder.embed_each(texts)
        vectors = each.vectors
        labels = [f"entity '{e.name}'" for e, _ in ent_todo] + [
            f"relation '{r.src_name}' – '{r.tgt_name}'" for r, _ in rel_todo
        ]
        refused.extend(f"{labels[i]}: {reason}" for i, reason in sorted(each.refused.items()))
    ent_vectors, rel_vectors = vectors[: len(ent_todo)], vectors[len(ent_todo) :]
    return (
        [
            EntityEmbeddingUpdate(e.key, e.description, vector, text_hash(body))
            for (e, body), vector in zip(ent_todo, ent_vectors, strict=True)
            if vector is not None
        ],
        [
            RelationEmbeddingUpdate(r.src_key, r.tgt_key, r.description, r.keywords, vector, text_hash(body))
            for (r, body), vector in zip(rel_todo, rel_vectors, strict=True)
            if vector is not None
        ],
    )
