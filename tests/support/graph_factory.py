"""Build knowledge graphs in the database directly (no LLM), stored exactly as the pipeline stores them:
keys from `entity_key`, relations as sorted pairs, embeddings = `fake_embedding` of the canonical texts
from app/domain/texts.py, provenance rows in insertion order, capped `source_ids` arrays.

    g = GraphFactory("default")
    g.document("doc-1", "novel.txt", ["chunk one text", "chunk two text"])      # chunk ids doc-1-c0, doc-1-c1
    g.entity("Charlie Gordon", "person", "A man ...", chunks=["doc-1-c0"])
    g.relation("Charlie Gordon", "Alice Kinnian", "mentorship", "Alice teaches ...", chunks=["doc-1-c1"])
    async with db.transaction() as conn:
        await g.insert(conn)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from sqlalchemy import insert
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.tables import chunks, documents, entities, entity_sources, projects, relation_sources, relations
from app.domain.names import entity_key, sorted_pair
from app.domain.texts import entity_embedding_text, relation_embedding_text, text_hash
from tests.support.fakes.openai_server import fake_embedding

DIM = 64


@dataclass
class GraphFactory:
    project_id: str = "default"
    dim: int = DIM
    embed: bool = True
    docs: list[dict] = field(default_factory=list)
    chunk_rows: list[dict] = field(default_factory=list)
    entity_rows: dict[str, dict] = field(default_factory=dict)
    relation_rows: dict[tuple[str, str], dict] = field(default_factory=dict)
    entity_src: list[dict] = field(default_factory=list)
    relation_src: list[dict] = field(default_factory=list)

    def _vec(self, text: str) -> list[float] | None:
        return fake_embedding(text, self.dim) if self.embed else None

    def _doc_of(self, chunk_id: str) -> dict:
        return next(c for c in self.chunk_rows if c["id"] == chunk_id)

    def document(self, doc_id: str, file_path: str | None, texts: list[str]) -> list[str]:
        content = "\n\n".join(texts)
        self.docs.append(
            {
                "project_id": self.project_id,
                "id": doc_id,
                "status": "processed",
                "content": content,
                "content_hash": hashlib.md5(content.encode()).hexdigest(),
                "content_length": len(content),
                "file_path": file_path,
                "chunks_count": len(texts),
                "graph_merged": True,
            }
        )
        ids = []
        for i, text in enumerate(texts):
            chunk_id = f"{doc_id}-c{i}"
            ids.append(chunk_id)
            self.chunk_rows.append(
                {
                    "project_id": self.project_id,
                    "id": chunk_id,
                    "document_id": doc_id,
                    "order_index": i,
                    "tokens": len(text.split()),
                    "start_token": 0,
                    "end_token": len(text.split()),
                    "content": text,
                    "file_path": file_path,
                    "embedding": self._vec(text),
                }
            )
        return ids

    def entity(
        self, name: str, entity_type: str, description: str, chunks: list[str], source_ids: list[str] | None = None
    ) -> str:
        key = entity_key(name)
        text = entity_embedding_text(name, description)
        files = list(dict.fromkeys(self._doc_of(c)["file_path"] or "unknown_source" for c in chunks))
        self.entity_rows[key] = {
            "project_id": self.project_id,
            "key": key,
            "name": name,
            "entity_type": entity_type,
            "description": description,
            "source_ids": source_ids if source_ids is not None else list(chunks),
            "file_paths": files,
            "embedding": self._vec(text),
            "embedded_hash": text_hash(text),
        }
        for chunk_id in chunks:
            self.entity_src.append(
                {
                    "project_id": self.project_id,
                    "entity_key": key,
                    "chunk_id": chunk_id,
                    "document_id": self._doc_of(chunk_id)["document_id"],
                }
            )
        return key

    def relation(
        self, a: str, b: str, keywords: str, description: str, chunks: list[str], weight: float = 1.0
    ) -> tuple[str, str]:
        for name in (a, b):
            if entity_key(name) not in self.entity_rows:
                self.entity(name, "UNKNOWN", description, chunks)
        src, tgt = sorted_pair(entity_key(a), entity_key(b))
        src_name, tgt_name = self.entity_rows[src]["name"], self.entity_rows[tgt]["name"]
        text = relation_embedding_text(src_name, tgt_name, keywords, description)
        files = list(dict.fromkeys(self._doc_of(c)["file_path"] or "unknown_source" for c in chunks))
        self.relation_rows[(src, tgt)] = {
            "project_id": self.project_id,
            "src_key": src,
            "tgt_key": tgt,
            "keywords": keywords,
            "description": description,
            "weight": weight,
            "source_ids": list(chunks),
            "file_paths": files,
            "embedding": self._vec(text),
            "embedded_hash": text_hash(text),
        }
        for chunk_id in chunks:
            self.relation_src.append(
                {
                    "project_id": self.project_id,
                    "src_key": src,
                    "tgt_key": tgt,
                    "chunk_id": chunk_id,
                    "document_id": self._doc_of(chunk_id)["document_id"],
                }
            )
        return (src, tgt)

    async def insert(self, conn: AsyncConnection) -> None:
        await conn.execute(
            pg_insert(projects)
            .values(id=self.project_id, name=self.project_id)
            .on_conflict_do_nothing(index_elements=["id"])
        )
        for table, rows in (
            (documents, self.docs),
            (chunks, self.chunk_rows),
            (entities, list(self.entity_rows.values())),
            (relations, list(self.relation_rows.values())),
            (entity_sources, self.entity_src),
            (relation_sources, self.relation_src),
        ):
            if rows:
                await conn.execute(insert(table), rows)
