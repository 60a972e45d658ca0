"""The quotes table.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "quotes",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("provider", sa.String(200), nullable=False),
        sa.Column("gpu", sa.String(100), nullable=False),
        sa.Column("mode", sa.String(20), nullable=False),
        sa.Column("term_months", sa.Integer, nullable=True),
        sa.Column("price", sa.Float, nullable=False),
        sa.Column("per", sa.String(20), nullable=False),
        sa.Column("price_per_gpu_hour", sa.Float, nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("quoted_on", sa.Date, nullable=False),
        sa.Column("note", sa.Text, nullable=False, server_default=""),
        sa.Column("gpus_per_node", sa.Integer, nullable=False, server_default="8"),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_quotes_gpu_mode_date", "quotes", ["gpu", "mode", "quoted_on"])


def downgrade() -> None:
    op.drop_index("ix_quotes_gpu_mode_date", table_name="quotes")
    op.drop_table("quotes")
