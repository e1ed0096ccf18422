"""Re-embed entities and relations after an edit, inside the caller's transaction.

Which items changed, and their vectors, is decided by app/services/graph/embedding.py."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncConnection

from app.domain.rows import EntityText, RelationText
from app.providers.embeddings import EmbeddingClient
from app.repositories import curation as repo
from app.services.graph.embedding import embed_changed


async def reembed(conn: AsyncConnection, embedder: EmbeddingClient, project_id: str, *,
                  entity_keys: Sequence[str] = (), touching: Sequence[str] = (),
                  pairs: Sequence[tuple[str, str]] = ()) -> int:
    """Embed the given entities, every relation touching `touching`, and the given relation pairs.
    Returns how many items were (re-)embedded."""
    entity_rows = (await repo.get_entities(conn, project_id, list(entity_keys))).values()
    relation_rows = {r.pair: r for r in await repo.relations_touching(conn, project_id, touching)}
    for row in await repo.relations_by_pairs(conn, project_id, [p for p in pairs if p not in relation_rows]):
        relation_rows[row.pair] = row

    ent_done, rel_done = await embed_changed(embedder, map(EntityText.of, entity_rows),
                                             map(RelationText.of, relation_rows.values()))
    await repo.set_entity_embeddings(conn, project_id, ent_done)
    await repo.set_relation_embeddings(conn, project_id, rel_done)
    return len(ent_done) + len(rel_done)
