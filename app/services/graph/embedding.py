"""Which entities and relations need a new embedding, and their vectors, in one batched call.

Texts come from app/domain/texts.py; an item whose stored `embedded_hash` equals the hash of its current
text is left out, so unchanged items cost nothing. Callers write the vectors their own way (the pipeline
compare-and-set under key locks, curation inside its edit transaction, deletion into its plan).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from app.domain.texts import entity_embedding_text, relation_embedding_text, text_hash
from app.providers.embeddings import EmbeddingClient


@dataclass
class Embedded:
    item: dict          # the caller's row, unchanged
    vector: list[float]
    text_hash: str      # to store as embedded_hash


async def embed_changed(
    embedder: EmbeddingClient, entities: Iterable[dict], relations: Iterable[dict]
) -> tuple[list[Embedded], list[Embedded]]:
    """Entities need name, description, embedded_hash; relations src_name, tgt_name, keywords, description,
    embedded_hash. Returns the changed ones with their new vectors, in the order given."""
    ent_todo = [(e, entity_embedding_text(e["name"], e["description"])) for e in entities]
    ent_todo = [(e, body) for e, body in ent_todo if e["embedded_hash"] != text_hash(body)]
    rel_todo = [(r, relation_embedding_text(r["src_name"], r["tgt_name"], r["keywords"], r["description"]))
                for r in relations]
    rel_todo = [(r, body) for r, body in rel_todo if r["embedded_hash"] != text_hash(body)]
    if not ent_todo and not rel_todo:
        return [], []
    vectors = await embedder.embed([body for _, body in ent_todo] + [body for _, body in rel_todo])
    done = [Embedded(item, vector, text_hash(body))
            for (item, body), vector in zip(ent_todo + rel_todo, vectors, strict=True)]
    return done[:len(ent_todo)], done[len(ent_todo):]
