"""Cache AI column results per user: another user's evaluations are never served as yours.

The rows cached so far were shared by every user and belong to nobody, so they are dropped (a cache: the
next run asks the model again); a downgrade drops the per-user rows for the same reason.

Revision ID: 0006_ai_column_results_per_user
Revises: 0005_login_security (0005 is being written beside this one; the chain is set on merge)
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_ai_column_results_per_user"
down_revision = "0005_login_security"
branch_labels = None
depends_on = None

OLD_KEY = ["criteria_hash", "column_type", "app", "model", "item_id"]


def upgrade() -> None:
    op.execute("DELETE FROM ai_column_results")
    with op.batch_alter_table("ai_column_results") as batch:
        batch.drop_constraint("uq_ai_column_results_key", type_="unique")
        batch.add_column(sa.Column("user_id", sa.Integer, nullable=False))
        batch.create_foreign_key("fk_ai_column_results_user_id_users", "users", ["user_id"], ["id"],
                                 ondelete="CASCADE")
        batch.create_unique_constraint("uq_ai_column_results_key", ["user_id", *OLD_KEY])


def downgrade() -> None:
    op.execute("DELETE FROM ai_column_results")
    with op.batch_alter_table("ai_column_results") as batch:
        batch.drop_constraint("uq_ai_column_results_key", type_="unique")
        batch.drop_constraint("fk_ai_column_results_user_id_users", type_="foreignkey")
        batch.drop_column("user_id")
        batch.create_unique_constraint("uq_ai_column_results_key", OLD_KEY)
