"""Alembic's environment for the quotes schema.

Run from gpuplan (`store.open_store`), it migrates on the connection passed in `config.attributes`; run
from Alembic's own CLI or `gpuplan quotes db`, it connects to the URL given by `-x url=...`, the
config's `sqlalchemy.url`, or GPUPLAN_DB (the same resolution `gpuplan quotes` uses).
"""

from __future__ import annotations

from typing import Any

from alembic import context

from gpuplan.quotes.store import QUOTES, resolve_url

config = context.config


def _run(connection: Any) -> None:
    context.configure(connection=connection, target_metadata=QUOTES.metadata,
                      render_as_batch=connection.dialect.name == "sqlite")
    with context.begin_transaction():
        context.run_migrations()


if "connection" in config.attributes:
    _run(config.attributes["connection"])
else:
    from sqlalchemy import create_engine

    url = context.get_x_argument(as_dictionary=True).get("url") or config.get_main_option("sqlalchemy.url")
    engine = create_engine(resolve_url(url))
    with engine.begin() as conn:
        _run(conn)
