"""Initial schema: projects, documents, chunks, entities, relations, provenance, llm cache.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import context, op
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects.postgresql import ARRAY, JSONB

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

EMPTY_JSON = sa.text("'{}'::jsonb")
# Entity keys compare in byte (= code point) order, exactly like Python's str ordering that sorts
# relation pairs; the database locale's collation would disagree and break the sorted-pair check.
KEY = sa.Text(collation="C")
EMPTY_TEXTS = sa.text("'{}'::text[]")


def _dim() -> int:
    dim = context.config.attributes.get("embedding_dim")
    if dim is None:
        from app.core.config import get_settings

        dim = get_settings().embedding_dim
    return int(dim)


def _timestamps() -> list[sa.Column]:
    return [
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
    ]


def _hnsw(table: str) -> None:
    op.execute(
        f"CREATE INDEX ix_{table}_embedding_hnsw ON {table} "
        "USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
    )


def upgrade() -> None:
    dim = _dim()
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.execute("CREATE SEQUENCE provenance_seq")

    op.create_table(
        "projects",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("settings", JSONB, nullable=False, server_default=EMPTY_JSON),
        *_timestamps(),
        sa.PrimaryKeyConstraint("id", name="pk_projects"),
    )

    op.create_table(
        "documents",
        sa.Column("project_id", sa.Text, nullable=False),
        sa.Column("id", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False, server_default="pending"),
        sa.Column("error", sa.Text),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("content_hash", sa.Text, nullable=False),
        sa.Column("content_length", sa.Integer, nullable=False),
        sa.Column("file_path", sa.Text),
        sa.Column("metadata", JSONB, nullable=False, server_default=EMPTY_JSON),
        sa.Column("chunks_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("llm_prompt_tokens", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("llm_completion_tokens", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("llm_calls", sa.Integer, nullable=False, server_default="0"),
        sa.Column("embedding_tokens", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("claimed_by", sa.Text),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True)),
        sa.Column("graph_merged", sa.Boolean, nullable=False, server_default=sa.text("false")),
        sa.Column("started_at", sa.DateTime(timezone=True)),
        sa.Column("finished_at", sa.DateTime(timezone=True)),
        *_timestamps(),
        sa.PrimaryKeyConstraint("project_id", "id", name="pk_documents"),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"], ondelete="CASCADE", name="fk_documents_project_id_projects"
        ),
        sa.CheckConstraint("status IN ('pending', 'processing', 'processed', 'failed')", name="ck_documents_status"),
    )
    op.create_index("uq_documents_project_id_content_hash", "documents", ["project_id", "content_hash"], unique=True)
    op.create_index("ix_documents_project_id_status", "documents", ["project_id", "status"])
    op.execute("CREATE INDEX ix_documents_queue ON documents (created_at) WHERE status IN ('pending', 'processing')")

    op.create_table(
        "chunks",
        sa.Column("project_id", sa.Text, nullable=False),
        sa.Column("id", sa.Text, nullable=False),
        sa.Column("document_id", sa.Text, nullable=False),
        sa.Column("order_index", sa.Integer, nullable=False),
        sa.Column("tokens", sa.Integer, nullable=False),
        sa.Column("start_token", sa.Integer, nullable=False),
        sa.Column("end_token", sa.Integer, nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("file_path", sa.Text),
        sa.Column("embedding", Vector(dim)),
        sa.Column("extraction_cache_keys", ARRAY(sa.Text), nullable=False, server_default=EMPTY_TEXTS),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.PrimaryKeyConstraint("project_id", "id", name="pk_chunks"),
        sa.ForeignKeyConstraint(
            ["project_id", "document_id"],
            ["documents.project_id", "documents.id"],
            ondelete="CASCADE",
            name="fk_chunks_project_id_document_id_documents",
        ),
    )
    op.create_index("ix_chunks_project_id_document_id", "chunks", ["project_id", "document_id"])
    # "is this cache entry still used by another chunk?" (deletion) as an indexed && lookup
    op.execute("CREATE INDEX ix_chunks_extraction_cache_keys ON chunks USING gin (extraction_cache_keys)")
    _hnsw("chunks")

    op.create_table(
        "entities",
        sa.Column("project_id", sa.Text, nullable=False),
        sa.Column("key", KEY, nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("entity_type", sa.Text, nullable=False, server_default="UNKNOWN"),
        sa.Column("description", sa.Text, nullable=False, server_default=""),
        sa.Column("source_ids", ARRAY(sa.Text), nullable=False, server_default=EMPTY_TEXTS),
        sa.Column("file_paths", ARRAY(sa.Text), nullable=False, server_default=EMPTY_TEXTS),
        sa.Column("truncate", sa.Text, nullable=False, server_default=""),
        sa.Column("degree", sa.Integer, nullable=False, server_default="0"),
        sa.Column("embedding", Vector(dim)),
        sa.Column("embedded_hash", sa.Text),
        *_timestamps(),
        sa.PrimaryKeyConstraint("project_id", "key", name="pk_entities"),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"], ondelete="CASCADE", name="fk_entities_project_id_projects"
        ),
    )
    op.execute("CREATE INDEX ix_entities_project_id_degree ON entities (project_id, degree DESC, key)")
    _hnsw("entities")

    op.create_table(
        "relations",
        sa.Column("project_id", sa.Text, nullable=False),
        sa.Column("src_key", KEY, nullable=False),
        sa.Column("tgt_key", KEY, nullable=False),
        sa.Column("keywords", sa.Text, nullable=False, server_default=""),
        sa.Column("description", sa.Text, nullable=False, server_default=""),
        sa.Column("weight", sa.Float, nullable=False, server_default="1.0"),
        sa.Column("source_ids", ARRAY(sa.Text), nullable=False, server_default=EMPTY_TEXTS),
        sa.Column("file_paths", ARRAY(sa.Text), nullable=False, server_default=EMPTY_TEXTS),
        sa.Column("truncate", sa.Text, nullable=False, server_default=""),
        sa.Column("embedding", Vector(dim)),
        sa.Column("embedded_hash", sa.Text),
        *_timestamps(),
        sa.PrimaryKeyConstraint("project_id", "src_key", "tgt_key", name="pk_relations"),
        sa.ForeignKeyConstraint(
            ["project_id", "src_key"],
            ["entities.project_id", "entities.key"],
            ondelete="CASCADE",
            name="fk_relations_project_id_src_key_entities",
        ),
        sa.ForeignKeyConstraint(
            ["project_id", "tgt_key"],
            ["entities.project_id", "entities.key"],
            ondelete="CASCADE",
            name="fk_relations_project_id_tgt_key_entities",
        ),
        sa.CheckConstraint("src_key < tgt_key", name="ck_relations_sorted_pair"),
    )
    op.create_index("ix_relations_project_id_tgt_key", "relations", ["project_id", "tgt_key"])
    _hnsw("relations")

    for table, key_cols, parent, parent_cols in (
        ("entity_sources", ["entity_key"], "entities", ["key"]),
        ("relation_sources", ["src_key", "tgt_key"], "relations", ["src_key", "tgt_key"]),
    ):
        op.create_table(
            table,
            sa.Column("project_id", sa.Text, nullable=False),
            *[sa.Column(c, KEY, nullable=False) for c in key_cols],
            sa.Column("chunk_id", sa.Text, nullable=False),
            sa.Column("document_id", sa.Text, nullable=False),
            sa.Column("seq", sa.BigInteger, nullable=False, server_default=sa.text("nextval('provenance_seq')")),
            sa.PrimaryKeyConstraint("project_id", *key_cols, "chunk_id", name=f"pk_{table}"),
            sa.ForeignKeyConstraint(
                ["project_id", *key_cols],
                [f"{parent}.project_id", *[f"{parent}.{c}" for c in parent_cols]],
                ondelete="CASCADE",
                onupdate="CASCADE",
                name=f"fk_{table}_project_id_{'_'.join(key_cols)}_{parent}",
            ),
            sa.ForeignKeyConstraint(
                ["project_id", "chunk_id"],
                ["chunks.project_id", "chunks.id"],
                ondelete="CASCADE",
                name=f"fk_{table}_project_id_chunk_id_chunks",
            ),
        )
        op.create_index(f"ix_{table}_project_id_chunk_id", table, ["project_id", "chunk_id"])
        op.create_index(f"ix_{table}_project_id_document_id", table, ["project_id", "document_id"])

    op.create_table(
        "llm_cache",
        sa.Column("project_id", sa.Text, nullable=False),
        sa.Column("key", sa.Text, nullable=False),
        sa.Column("cache_type", sa.Text, nullable=False),
        sa.Column("model", sa.Text),
        sa.Column("response", sa.Text, nullable=False),
        sa.Column("prompt_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("completion_tokens", sa.Integer, nullable=False, server_default="0"),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()),
        sa.PrimaryKeyConstraint("project_id", "key", name="pk_llm_cache"),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"], ondelete="CASCADE", name="fk_llm_cache_project_id_projects"
        ),
    )

    # Entity degree stays exact whatever path inserts or deletes relations.
    op.execute(
        """
        CREATE FUNCTION relations_maintain_degree() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF TG_OP IN ('DELETE', 'UPDATE') THEN
            UPDATE entities SET degree = degree - 1
             WHERE project_id = OLD.project_id AND key IN (OLD.src_key, OLD.tgt_key);
          END IF;
          IF TG_OP IN ('INSERT', 'UPDATE') THEN
            UPDATE entities SET degree = degree + 1
             WHERE project_id = NEW.project_id AND key IN (NEW.src_key, NEW.tgt_key);
          END IF;
          RETURN NULL;
        END $$;
        """
    )
    op.execute(
        "CREATE TRIGGER trg_relations_degree AFTER INSERT OR DELETE OR UPDATE OF src_key, tgt_key "
        "ON relations FOR EACH ROW EXECUTE FUNCTION relations_maintain_degree()"
    )
    op.execute("INSERT INTO projects (id, name) VALUES ('default', 'Default project')")


def downgrade() -> None:
    for table in (
        "llm_cache",
        "relation_sources",
        "entity_sources",
        "relations",
        "entities",
        "chunks",
        "documents",
        "projects",
    ):
        op.drop_table(table)
    op.execute("DROP FUNCTION IF EXISTS relations_maintain_degree()")
    op.execute("DROP SEQUENCE IF EXISTS provenance_seq")
