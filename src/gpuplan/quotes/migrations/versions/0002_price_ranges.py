"""A quoted range: the low and high ends of a price such as 180-260 (`price` stays its midpoint).

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("quotes") as batch:
        batch.add_column(sa.Column("price_low", sa.Float, nullable=True))
        batch.add_column(sa.Column("price_high", sa.Float, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("quotes") as batch:
        batch.drop_column("price_high")
        batch.drop_column("price_low")
