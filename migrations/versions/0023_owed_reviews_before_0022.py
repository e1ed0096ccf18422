"""Resolution reviews owed from before migration 0022 marked. That migration's mark (`review_owed`) is set by a
merge; rows merged before it were never marked, so the sweep (app/services/ingest/review_sweep.py) never reviews:

- a document whose merge committed and which did not end processed (`graph_merged`, status failed or cancelled,
  or pending / processing again: a retry skips the merge, so it never marks; a processed end clears the mark);
- a processed update (`update_of` set), whose swap merged but which ran no final pass: updates ran none before
  the final pass was added to them (app/services/update/runner.py). Only each document's last processed update is
  marked: the sweep reviews the updated document's current nodes, once is enough.

Marked rows are swept by a worker running ENTITY_RESOLUTION auto or llm (no review runs with off or suggest);
a review done already (the row's document processed after all, say) changes nothing. A downgrade has nothing to
restore: the marks are cleared as the sweep reviews.

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-28
"""

from __future__ import annotations

from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None

MERGED_NOT_PROCESSED = """
UPDATE documents SET review_owed = true
 WHERE graph_merged AND NOT review_owed AND status <> 'processed'
"""

LAST_PROCESSED_UPDATES = """
UPDATE documents d SET review_owed = true
  FROM (SELECT DISTINCT ON (project_id, update_of) project_id, id
          FROM documents
         WHERE update_of IS NOT NULL AND graph_merged AND status = 'processed'
         ORDER BY project_id, update_of, finished_at DESC NULLS LAST, id DESC) AS u
 WHERE d.project_id = u.project_id AND d.id = u.id AND NOT d.review_owed
"""


def upgrade() -> None:
    op.execute(MERGED_NOT_PROCESSED)
    op.execute(LAST_PROCESSED_UPDATES)


def downgrade() -> None:
    pass
