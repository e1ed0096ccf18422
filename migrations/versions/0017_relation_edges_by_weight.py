"""Edges by weight: each relation is indexed under both of its ends with its weight, heaviest first.

Graph expansion for personalised PageRank (app/repositories/neighbourhood.py) follows only the heaviest few
edges out of each entity. Without an order by weight it read every edge of a hub to find them (thousands
of rows per hub entity at the big-corpus bench's 25x, most of a local query's time); with these indexes each
end's heaviest edges are read first, index only, and the read stops after the few it needs.

(project_id, tgt_key, weight DESC, src_key) replaces (project_id, tgt_key): every lookup by target still
finds its prefix, and relations keep two secondary btree indexes to maintain, not three. Built in the
migration's transaction: writes to `relations` wait for the build (seconds for 150,000 relations).

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27
"""

from __future__ import annotations

from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        "CREATE INDEX IF NOT EXISTS ix_relations_project_id_src_key_weight"
        " ON relations (project_id, src_key, weight DESC, tgt_key)"
    )
    op.execute(
        "CREATE INDEX IF NOT EXISTS ix_relations_project_id_tgt_key_weight"
        " ON relations (project_id, tgt_key, weight DESC, src_key)"
    )
    op.execute("DROP INDEX IF EXISTS ix_relations_project_id_tgt_key")


def downgrade() -> None:
    op.execute("CREATE INDEX IF NOT EXISTS ix_relations_project_id_tgt_key ON relations (project_id, tgt_key)")
    op.execute("DROP INDEX IF EXISTS ix_relations_project_id_tgt_key_weight")
    op.execute("DROP INDEX IF EXISTS ix_relations_project_id_src_key_weight")
