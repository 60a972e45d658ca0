"""Lease terms on an offer and the market over a horizon (`gpuplan commit`), both optional in a scenario.

    offers[i].terms:  [{length: 12mo, price: {amount: 180, per: gpu-day}, early_exit: 0.5}, ...]
    market:           {horizon: 12mo, container_price_drift: [-0.35, -0.10],
                       bare_metal_price_drift: [-0.25, 0.0], demand_growth: [0.0, 0.08],
                       container_price_volatility: 0.4, bare_metal_price_volatility: 0.2}

Lengths are whole months: `12mo`, or a duration (`30d`, `2w`) that is a whole number of the scenario's
months. Drifts are per year, demand growth per month, each a number or a [low, high] range;
volatilities are the yearly standard deviation of log price moves (0: a price follows its drift); a value
of -1 or below would make a price (or the demand) zero or negative, so it is refused. `early_exit` is
the share of the remaining rent owed on leaving early, in [0, 1]. Version 1 files without these
fields read as before: an offer without `terms` has one term, its own price for its `min_term`
rounded up to whole months (at least one).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from gpuplan.inputs.units import UnitError, parse_duration, per_gpu_hour
from gpuplan.limits import MAX_DRIFT, MAX_HORIZON_MONTHS, MAX_QUANTITY

_MONTHS = re.compile(r"^\s*(\d+)\s*(mo|month|months)\s*$")
DEFAULT_HORIZON_MONTHS = 12


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TermPriceIn(_Strict):
    amount: Annotated[float, Field(ge=0, le=MAX_QUANTITY)]
    per: Literal["gpu-hour", "gpu-day", "gpu-month", "node-hour", "node-day", "node-month"]


class TermIn(_Strict):
    length: str
    price: TermPriceIn
    early_exit: Annotated[float, Field(ge=0, le=1)] | None = None


def _range(v: float | tuple[float, float]) -> float | tuple[float, float]:
    if isinstance(v, tuple) and v[0] > v[1]:
        raise ValueError(f"a range must be [low, high] with low <= high, got [{v[0]}, {v[1]}]")
    lo = v[0] if isinstance(v, tuple) else v
    if lo <= -1:
        raise ValueError(f"a fall of 100% or more makes prices zero or negative, got {lo:g}")
    hi = v[1] if isinstance(v, tuple) else v
    if not hi <= MAX_DRIFT:  # also NaN and inf
        raise ValueError(f"a rise of more than {MAX_DRIFT:.0%} per period is over the limit, got {hi:g}")
    return v


Drift = float | tuple[float, float]


class MarketIn(_Strict):
    horizon: str | None = None
    container_price_drift: Drift | None = None
    bare_metal_price_drift: Drift | None = None
    demand_growth: Drift | None = None
    container_price_volatility: Annotated[float, Field(ge=0, le=5)] | None = None
    bare_metal_price_volatility: Annotated[float, Field(ge=0, le=5)] | None = None

    @field_validator("container_price_drift", "bare_metal_price_drift", "demand_growth")
    @classmethod
    def _ranges(cls, v: Drift | None) -> Drift | None:
        return None if v is None else _range(v)


@dataclass(frozen=True)
class LeaseTerm:
    """One term a vendor offers: whole months at a price per GPU-hour, and the exit share."""

    months: int
    price_per_gpu_hour: float
    early_exit: float | None = None
    field: str = ""  # where it came from (offers[0].terms[1]), for error messages


@dataclass(frozen=True)
class Market:
    """The market section as given (None: not given, so the quote history or a flat market decides)."""

    horizon_months: int | None
    container_price_drift: tuple[float, float] | None
    bare_metal_price_drift: tuple[float, float] | None
    demand_growth: tuple[float, float] | None
    container_price_volatility: float | None = None
    bare_metal_price_volatility: float | None = None


def months_of(value: str, days_per_month: float) -> int:
    """`12mo` -> 12; `90d` -> 3 with 30-day months; anything not a whole number of months is refused."""
    m = _MONTHS.match(value.strip().lower()) if isinstance(value, str) else None
    if m:
        n = int(m.group(1))
    else:
        try:
            hours = parse_duration(value)
        except UnitError:
            raise UnitError(f"expected whole months such as 1mo, 6mo or 12mo, got {value!r}") from None
        exact = hours / (days_per_month * 24.0)
        n = round(exact)
        if abs(exact - n) > 1e-6:
            raise UnitError(f"expected whole months (1mo, 6mo, 12mo or {days_per_month:g}d steps), got {value!r}")
    if n < 1:
        raise UnitError(f"a length of at least one month is needed, got {value!r}")
    if n > MAX_HORIZON_MONTHS:
        raise UnitError(f"{value}: {n:,} months is over the limit of {MAX_HORIZON_MONTHS} months "
                        "(docs/limits.md)")
    return n


def _pair(v: Drift | None) -> tuple[float, float] | None:
    if v is None:
        return None
    return (float(v[0]), float(v[1])) if isinstance(v, tuple) else (float(v), float(v))


ErrorAt = Callable[[tuple[Any, ...], str, str], Exception]


def resolve_terms(terms: list[TermIn] | None, i: int, gpus_per_node: int, days_per_month: float,
                  error: ErrorAt) -> tuple[LeaseTerm, ...]:
    """The offer's terms, parsed (an error names `offers[i].terms[j]...`)."""
    out: list[LeaseTerm] = []
    for j, t in enumerate(terms or []):
        try:
            months = months_of(t.length, days_per_month)
        except UnitError as exc:
            raise error(("offers", i, "terms", j, "length"), str(exc),
                        "a term is whole months: 1mo, 3mo, 6mo, 12mo.") from None
        if any(x.months == months for x in out):
            raise error(("offers", i, "terms", j, "length"), f"two terms of {months} months",
                        "give each term length once.")
        price = per_gpu_hour(t.price.amount, t.price.per, gpus_per_node=gpus_per_node, days_per_month=days_per_month)
        out.append(LeaseTerm(months, price, t.early_exit, f"offers[{i}].terms[{j}]"))
    return tuple(sorted(out, key=lambda x: x.months))


def resolve_market(m: MarketIn | None, days_per_month: float, error: ErrorAt) -> Market | None:
    if m is None:
        return None
    horizon = None
    if m.horizon is not None:
        try:
            horizon = months_of(m.horizon, days_per_month)
        except UnitError as exc:
            raise error(("market", "horizon"), str(exc), "the horizon is whole months, e.g. 12mo or 24mo.") from None
    return Market(horizon, _pair(m.container_price_drift), _pair(m.bare_metal_price_drift), _pair(m.demand_growth),
                  m.container_price_volatility, m.bare_metal_price_volatility)


def default_term(min_term_hours: float, price_per_gpu_hour: float, days_per_month: float) -> LeaseTerm:
    """An offer without `terms`: its own price, for its min_term in whole months (at least one)."""
    months = max(1, math.ceil(min_term_hours / (days_per_month * 24.0) - 1e-9))
    return LeaseTerm(months, price_per_gpu_hour, None, "")


__all__ = ["DEFAULT_HORIZON_MONTHS", "LeaseTerm", "Market", "MarketIn", "TermIn", "default_term", "months_of",
           "resolve_market", "resolve_terms"]
