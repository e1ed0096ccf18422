"""Re-embed entities and relations after an edit, inside the caller's transaction.

Texts come from app/domain/texts.py (the one canonical builder); an item whose stored `embedded_hash`
already equals the hash of its current text is skipped, so unchanged items cost nothing."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncConnection

from app.domain.texts import entity_embedding_text, relation_embedding_text, text_hash
from app.providers.embeddings import EmbeddingClient
from app.repositories import curation as repo


async def reembed(conn: AsyncConnection, embedder: EmbeddingClient, project_id: str, *,
                  entity_keys: Sequence[str] = (), touching: Sequence[str] = (),
                  pairs: Sequence[tuple[str, str]] = ()) -> int:
    """Embed the given entities, every relation touching `touching`, and the given relation pairs.
    Returns how many items were (re-)embedded."""
    entity_rows = (await repo.get_entities(conn, project_id, list(entity_keys))).values()
    relation_rows = {(r["src_key"], r["tgt_key"]): r for r in await repo.relations_touching(conn, project_id, touching)}
    for row in await repo.relations_by_pairs(conn, project_id, [p for p in pairs if p not in relation_rows]):
        relation_rows[(row["src_key"], row["tgt_key"])] = row

    ent_todo = []
    for row in entity_rows:
        content = entity_embedding_text(row["name"], row["description"])
        if row["embedded_hash"] != text_hash(content):
            ent_todo.append((row["key"], content))
    rel_todo = []
    for pair, row in relation_rows.items():
        content = relation_embedding_text(row["src_name"], row["tgt_name"], row["keywords"], row["description"])
        if row["embedded_hash"] != text_hash(content):
            rel_todo.append((pair, content))
    if not ent_todo and not rel_todo:
        return 0

    vectors = await embedder.embed([t for _, t in ent_todo] + [t for _, t in rel_todo])
    ent_vectors, rel_vectors = vectors[:len(ent_todo)], vectors[len(ent_todo):]
    await repo.set_entity_embeddings(
        conn, project_id, [(k, v, text_hash(t)) for (k, t), v in zip(ent_todo, ent_vectors, strict=True)])
    await repo.set_relation_embeddings(
        conn, project_id, [(p, v, text_hash(t)) for (p, t), v in zip(rel_todo, rel_vectors, strict=True)])
    return len(ent_todo) + len(rel_todo)
