"""Per-stream version numbers for chat instructions: v1, v2, v3 within each stream instead of the shared id.

Existing rows are numbered per stream in the order they were saved (by id, which grows with time).

Revision ID: 0011_stream_versions
Revises: 0010_conversation_settings
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011_stream_versions"
down_revision = "0010_conversation_settings"
branch_labels = None
depends_on = None

TABLE = "stream_instruction_versions"
UNIQUE = "uq_stream_instruction_versions_stream_number"


def upgrade() -> None:
    op.add_column(TABLE, sa.Column("number", sa.Integer, nullable=True))
    versions = sa.table(TABLE, sa.column("id", sa.Integer), sa.column("stream_id", sa.Integer),
                        sa.column("number", sa.Integer))
    conn = op.get_bind()
    counts: dict[int, int] = {}
    for version_id, stream_id in conn.execute(sa.select(versions.c.id, versions.c.stream_id)
                                              .order_by(versions.c.id)).all():
        counts[stream_id] = counts.get(stream_id, 0) + 1
        conn.execute(versions.update().where(versions.c.id == version_id).values(number=counts[stream_id]))
    with op.batch_alter_table(TABLE) as batch:
        batch.alter_column("number", existing_type=sa.Integer, nullable=False)
        batch.create_unique_constraint(UNIQUE, ["stream_id", "number"])


def downgrade() -> None:
    with op.batch_alter_table(TABLE) as batch:
        batch.drop_constraint(UNIQUE, type_="unique")
        batch.drop_column("number")
