"""A team's quote history: vendor quotes (provider, GPU, mode, term, price, currency, date, note) kept in
SQLite (the user's data folder by default) or PostgreSQL, and the price drift they show.

`store` reads and writes them (SQLAlchemy Core; the schema is migrated by Alembic, `migrations/`),
`csvio` reads a quotes CSV, `trend` fits the drift per (GPU, mode).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

MODES = ("bare-metal", "container", "vm")
CSV_COLUMNS = ("provider", "gpu", "mode", "term", "price", "per", "currency", "date", "note")


@dataclass(frozen=True)
class Quote:
    """One quote; `price_per_gpu_hour` is `price` per `per` normalised (a node price over `gpus_per_node`).

    A quoted range (`180-260`) is kept whole in `price_low`/`price_high`; `price` is its midpoint."""

    provider: str
    gpu: str
    mode: str
    term_months: int | None
    price: float
    per: str
    price_per_gpu_hour: float
    currency: str
    quoted_on: date
    note: str = ""
    gpus_per_node: int = 8
    id: int | None = None
    price_low: float | None = None
    price_high: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "provider": self.provider, "gpu": self.gpu, "mode": self.mode,
                "term_months": self.term_months, "price": self.price, "per": self.per,
                "price_per_gpu_hour": round(self.price_per_gpu_hour, 6), "currency": self.currency,
                "date": self.quoted_on.isoformat(), "note": self.note,
                "price_low": self.price_low, "price_high": self.price_high}


__all__ = ["CSV_COLUMNS", "MODES", "Quote"]
