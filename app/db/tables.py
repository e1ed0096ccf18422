"""Table definitions (SQLAlchemy Core). Alembic owns the DDL; these mirror it for queries.

Every table carries `project_id`. Entities are keyed by a normalised, case-folded `key` and keep the
first-seen display `name`. Relations are undirected: stored once with `src_key < tgt_key`.
Provenance lives in join tables with cascading foreign keys, so a deleted chunk can never leave
provenance behind, and `degree` on entities is kept exact by a trigger on relations.
"""

from __future__ import annotations

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Computed,
    DateTime,
    Float,
    ForeignKeyConstraint,
    Identity,
    Index,
    Integer,
    MetaData,
    Table,
    Text,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, TSVECTOR

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING)

KEY = Text(collation="C")  # byte order = Python's str order, which sorts relation pairs


def _timestamps() -> list[Column]:
    return [
        Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
        Column("updated_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    ]


projects = Table(
    "projects",
    metadata,
    Column("id", Text, primary_key=True),
    Column("name", Text, nullable=False),
    Column("settings", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
    *_timestamps(),
)

documents = Table(
    "documents",
    metadata,
    Column("project_id", Text, primary_key=True),
    Column("id", Text, primary_key=True),
    Column("status", Text, nullable=False, server_default="pending"),
    Column("error", Text),
    Column("content", Text, nullable=False),
    Column("content_hash", Text, nullable=False),
    Column("content_length", Integer, nullable=False),
    Column("file_path", Text),
    Column("metadata", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
    Column("chunks_count", Integer, nullable=False, server_default="0"),
    Column("llm_prompt_tokens", BigInteger, nullable=False, server_default="0"),
    Column("llm_completion_tokens", BigInteger, nullable=False, server_default="0"),
    Column("llm_calls", Integer, nullable=False, server_default="0"),
    Column("embedding_tokens", BigInteger, nullable=False, server_default="0"),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("claimed_by", Text),
    Column("heartbeat_at", DateTime(timezone=True)),
    Column("graph_merged", Boolean, nullable=False, server_default=text("false")),
    Column("extraction_report", JSONB),  # ExtractionReport of the attempt that merged the graph
    # Where a processing document is (parsing … embedding) and its running figures (migration 0004).
    Column("stage", Text),
    Column("progress", JSONB),
    Column("cancel_requested", Boolean, nullable=False, server_default=text("false")),
    Column("started_at", DateTime(timezone=True)),
    Column("finished_at", DateTime(timezone=True)),
    # Documents that change (migration 0012): the current version, and on a queued update's own row the
    # document it updates (app/services/update/).
    Column("version", Integer, nullable=False, server_default="1"),
    Column("update_of", Text),
    # Owing its resolution review after the merge (migration 0022): set with graph_merged, cleared once
    # processed or swept by a worker (app/services/ingest/review_sweep.py), whose lease is review_taken_at.
    Column("review_owed", Boolean, nullable=False, server_default=text("false")),
    Column("review_taken_at", DateTime(timezone=True)),
    *_timestamps(),
    ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
    ForeignKeyConstraint(["project_id", "update_of"], ["documents.project_id", "documents.id"], ondelete="CASCADE"),
    Index(
        "ix_documents_project_id_update_of", "project_id", "update_of", postgresql_where=text("update_of IS NOT NULL")
    ),
    Index("ix_documents_review_owed", "finished_at", postgresql_where=text("review_owed")),
    CheckConstraint("status IN ('pending', 'processing', 'processed', 'failed', 'cancelled')", name="status"),
)

document_versions = Table(
    "document_versions",
    metadata,
    Column("project_id", Text, primary_key=True),
    Column("document_id", Text, primary_key=True),
    Column("version", Integer, primary_key=True),
    Column("content_hash", Text, nullable=False),
    Column("content_length", Integer, nullable=False),
    Column("chunks_count", Integer, nullable=False),
    Column("chunks_reused", Integer, nullable=False, server_default="0"),
    Column("chunks_added", Integer, nullable=False, server_default="0"),
    Column("chunks_removed", Integer, nullable=False, server_default="0"),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    ForeignKeyConstraint(["project_id", "document_id"], ["documents.project_id", "documents.id"], ondelete="CASCADE"),
)

chunks = Table(
    "chunks",
    metadata,
    Column("project_id", Text, primary_key=True),
    Column("id", Text, primary_key=True),
    Column("document_id", Text, nullable=False),
    Column("order_index", Integer, nullable=False),
    Column("tokens", Integer, nullable=False),
    Column("start_token", Integer, nullable=False),
    Column("end_token", Integer, nullable=False),
    Column("content", Text, nullable=False),
    Column("file_path", Text),
    Column("embedding", Vector()),
    # llm_cache keys of every extraction pass (first pass, then gleaning) for this chunk, in order.
    Column("extraction_cache_keys", ARRAY(Text), nullable=False, server_default=text("'{}'::text[]")),
    # the records parsed from those answers (app/domain/chunk_records.py; migration 0008), read by deletion
    Column("extraction_records", JSONB),
    # full-text search (migration 0005), kept by PostgreSQL; read only by app/repositories/lexical.py
    Column("search_vector", TSVECTOR, Computed("to_tsvector('english'::regconfig, content)", persisted=True)),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    ForeignKeyConstraint(["project_id", "document_id"], ["documents.project_id", "documents.id"], ondelete="CASCADE"),
)

entities = Table(
    "entities",
    metadata,
    Column("project_id", Text, primary_key=True),
    Column("key", KEY, primary_key=True),
    Column("name", Text, nullable=False),
    Column("entity_type", Text, nullable=False, server_default="UNKNOWN"),
    Column("description", Text, nullable=False, server_default=""),
    Column("source_ids", ARRAY(Text), nullable=False, server_default=text("'{}'::text[]")),
    Column("file_paths", ARRAY(Text), nullable=False, server_default=text("'{}'::text[]")),
    Column("truncate", Text, nullable=False, server_default=""),
    Column("degree", Integer, nullable=False, server_default="0"),
    Column("embedding", Vector()),
    Column("embedded_hash", Text),
    # The fields written or edited by hand (migration 0024: description, entity_type): a deletion rebuild keeps
    # them instead of recomputing them; `curated` says some field is.
    Column("hand_fields", ARRAY(Text), nullable=False, server_default=text("'{}'::text[]")),
    Column("curated", Boolean, Computed("cardinality(hand_fields) > 0", persisted=True)),
    Column(
        "search_vector",
        TSVECTOR,
        Computed(  # see chunks.search_vector
            "setweight(to_tsvector('simple'::regconfig, name), 'A') || "
            "setweight(to_tsvector('english'::regconfig, description), 'B')",
            persisted=True,
        ),
    ),
    *_timestamps(),
    ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
)

relations = Table(
    "relations",
    metadata,
    Column("project_id", Text, primary_key=True),
    Column("src_key", KEY, primary_key=True),
    Column("tgt_key", KEY, primary_key=True),
    Column("keywords", Text, nullable=False, server_default=""),
    Column("description", Text, nullable=False, server_default=""),
    Column("weight", Float, nullable=False, server_default="1.0"),
    Column("source_ids", ARRAY(Text), nullable=False, server_default=text("'{}'::text[]")),
    Column("file_paths", ARRAY(Text), nullable=False, server_default=text("'{}'::text[]")),
    Column("truncate", Text, nullable=False, server_default=""),
    Column("embedding", Vector()),
    Column("embedded_hash", Text),
    # see entities.hand_fields (description, keywords, weight)
    Column("hand_fields", ARRAY(Text), nullable=False, server_default=text("'{}'::text[]")),
    Column("curated", Boolean, Computed("cardinality(hand_fields) > 0", persisted=True)),
    Column(
        "search_vector",
        TSVECTOR,
        Computed(  # see chunks.search_vector
            "setweight(to_tsvector('english'::regconfig, keywords), 'A') || "
            "setweight(to_tsvector('english'::regconfig, description), 'B')",
            persisted=True,
        ),
    ),
    *_timestamps(),
    ForeignKeyConstraint(["project_id", "src_key"], ["entities.project_id", "entities.key"], ondelete="CASCADE"),
    ForeignKeyConstraint(["project_id", "tgt_key"], ["entities.project_id", "entities.key"], ondelete="CASCADE"),
    CheckConstraint("src_key < tgt_key", name="sorted_pair"),
)

entity_sources = Table(
    "entity_sources",
    metadata,
    Column("project_id", Text, primary_key=True),
    Column("entity_key", KEY, primary_key=True),
    Column("chunk_id", Text, primary_key=True),
    Column("document_id", Text, nullable=False),
    Column("seq", BigInteger, nullable=False, server_default=text("nextval('provenance_seq')")),
    ForeignKeyConstraint(
        ["project_id", "entity_key"],
        ["entities.project_id", "entities.key"],
        ondelete="CASCADE",
        onupdate="CASCADE",
    ),
    ForeignKeyConstraint(["project_id", "chunk_id"], ["chunks.project_id", "chunks.id"], ondelete="CASCADE"),
)

relation_sources = Table(
    "relation_sources",
    metadata,
    Column("project_id", Text, primary_key=True),
    Column("src_key", KEY, primary_key=True),
    Column("tgt_key", KEY, primary_key=True),
    Column("chunk_id", Text, primary_key=True),
    Column("document_id", Text, nullable=False),
    Column("seq", BigInteger, nullable=False, server_default=text("nextval('provenance_seq')")),
    ForeignKeyConstraint(
        ["project_id", "src_key", "tgt_key"],
        ["relations.project_id", "relations.src_key", "relations.tgt_key"],
        ondelete="CASCADE",
        onupdate="CASCADE",
    ),
    ForeignKeyConstraint(["project_id", "chunk_id"], ["chunks.project_id", "chunks.id"], ondelete="CASCADE"),
)

llm_cache = Table(
    "llm_cache",
    metadata,
    Column("project_id", Text, primary_key=True),
    Column("key", KEY, primary_key=True),
    Column("cache_type", Text, nullable=False),
    Column("model", Text),
    Column("response", Text, nullable=False),
    Column("prompt_tokens", Integer, nullable=False, server_default="0"),
    Column("completion_tokens", Integer, nullable=False, server_default="0"),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
)

# Recent pipeline events per project (started, finished, failed, retried, cancelled), pruned to the newest
# few hundred per project; no foreign key to documents: a deleted document's history stays readable.
pipeline_events = Table(
    "pipeline_events",
    metadata,
    Column("id", BigInteger, Identity(), primary_key=True),
    Column("project_id", Text, nullable=False),
    Column("document_id", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("detail", Text),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
    CheckConstraint("kind IN ('started', 'finished', 'failed', 'retried', 'cancelled')", name="kind"),
)

# Entity resolution (migration 0006). An alias key (an entity_key of a surface form) names the entity it
# resolves to; suggestions are pairs found but not applied; rejections are pairs a user said are distinct.
entity_aliases = Table(
    "entity_aliases",
    metadata,
    Column("project_id", Text, primary_key=True),
    Column("alias_key", KEY, primary_key=True),
    Column("entity_key", KEY, nullable=False),
    Column("alias_name", Text, nullable=False),
    Column("source", Text, nullable=False),
    Column("document_id", Text),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
    CheckConstraint("source IN ('rule', 'acronym', 'partial', 'similarity', 'merge', 'manual')", name="source"),
    Index("ix_entity_aliases_project_id_entity_key", "project_id", "entity_key"),
)


# One row per automatic merge of entity resolution (migration 0013): which names, which rule, which document,
# and what a user made of it (migration 0014).
entity_merge_ledger = Table(
    "entity_merge_ledger",
    metadata,
    Column("id", BigInteger, Identity(), primary_key=True),
    Column("project_id", Text, nullable=False),
    Column("entity_key", KEY, nullable=False),
    Column("merged_key", KEY, nullable=False),
    Column("merged_name", Text, nullable=False),
    Column("rule", Text, nullable=False),
    Column("evidence", Text, nullable=False, server_default=""),
    Column("document_id", Text),
    Column("retroactive", Boolean, nullable=False, server_default=text("false")),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    # what a user made of it (migration 0014): NULL while unreviewed
    Column("outcome", Text),
    Column("decided_at", DateTime(timezone=True)),
    ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
    CheckConstraint("outcome IN ('confirmed', 'undone', 'rejected')", name="outcome"),
    Index("ix_entity_merge_ledger_project_id_entity_key", "project_id", "entity_key"),
    Index("ix_entity_merge_ledger_project_id_id", "project_id", "id"),
    # the standing merges of a short form, read after each document (migration 0018)
    Index(
        "ix_entity_merge_ledger_short_forms",
        "project_id",
        "merged_key",
        postgresql_where=text("rule IN ('partial', 'root') AND outcome IS NULL"),
    ),
)


def _pair_table(name: str, *extra: Column) -> Table:
    return Table(
        name,
        metadata,
        Column("project_id", Text, primary_key=True),
        Column("key_a", KEY, primary_key=True),
        Column("key_b", KEY, primary_key=True),
        *extra,
        Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
        ForeignKeyConstraint(["project_id"], ["projects.id"], ondelete="CASCADE"),
        CheckConstraint("key_a < key_b", name="sorted_pair"),
    )


entity_suggestions = _pair_table(
    "entity_suggestions",
    Column("score", Float, nullable=False),
    Column("evidence", Text, nullable=False, server_default=""),
)
entity_rejections = _pair_table("entity_rejections")

# Worker liveness (migration 0007): a worker that stops heartbeating (its last_seen is older than three of
# its own heartbeat intervals) is dead, and its claimed documents are retaken at once.
workers = Table(
    "workers",
    metadata,
    Column("id", Text, primary_key=True),
    Column("heartbeat_interval", Float, nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("last_seen", DateTime(timezone=True), nullable=False, server_default=func.now()),
    CheckConstraint("heartbeat_interval > 0", name="positive_interval"),
)

# The fleet's provider budget (migration 0015): a token bucket per provider (kind, base URL, model), a pause
# set by the provider's 429s, and the calls in flight as leases that expire when their holder stops renewing.
provider_budgets = Table(
    "provider_budgets",
    metadata,
    Column("id", Text, primary_key=True),  # kind, base URL and model
    Column("kind", Text, nullable=False),
    Column("requests", Float, nullable=False),
    Column("tokens", Float, nullable=False),
    Column("refilled_at", DateTime(timezone=True), nullable=False),
    Column("paused_until", DateTime(timezone=True)),
    Column("window_start", DateTime(timezone=True), nullable=False),
    Column("window_requests", BigInteger, nullable=False, server_default="0"),
    Column("window_tokens", BigInteger, nullable=False, server_default="0"),
    Column("leased", Integer, nullable=False, server_default="0"),
    Column("rate_limited", BigInteger, nullable=False, server_default="0"),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
)
provider_leases = Table(
    "provider_leases",
    metadata,
    Column("id", BigInteger, Identity(), primary_key=True),
    Column("budget_key", Text, nullable=False),
    Column("holder", Text, nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
    ForeignKeyConstraint(["budget_key"], ["provider_budgets.id"], ondelete="CASCADE"),
    Index("ix_provider_leases_budget_key", "budget_key"),
    Index("ix_provider_leases_holder", "holder"),
)
