"""The price drift a quote history shows, per (GPU, mode), with its uncertainty.

    ln(price per GPU-hour) = a_term + b * t + e     t: years; one level a_term per lease term (a term's
                                                    discount is a level; the fit is of the change)
    drift a year           = exp(b) - 1
    se(b)                  = sqrt(sum e^2 / (n - 1 - terms) / sum (t - mean_term t)^2)   (least squares)
    range                  = exp(b -/+ 1.645 se(b)) - 1                         (a 90% interval)

A group needs at least 3 quotes on at least 2 different days, and more quotes than terms + 1; fewer
give no fit.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuplan.quotes import Quote

Z90 = 1.6448536269514722
MIN_QUOTES = 3


@dataclass(frozen=True)
class Trend:
    gpu: str
    mode: str
    currency: str
    n: int
    first: str
    last: str
    drift: float  # a year
    low: float
    high: float
    se_log: float  # standard error of the log slope a year

    def to_json(self) -> dict[str, Any]:
        return {"gpu": self.gpu, "mode": self.mode, "currency": self.currency, "quotes": self.n,
                "first": self.first, "last": self.last, "drift_per_year": round(self.drift, 4),
                "drift_low": round(self.low, 4), "drift_high": round(self.high, 4),
                "se_log_slope": round(self.se_log, 4)}


def fit(quotes: Sequence[Quote]) -> Trend | None:
    """The log-linear fit of one group (None when it has too few quotes or days)."""
    if len(quotes) < MIN_QUOTES:
        return None
    days = np.array([q.quoted_on.toordinal() for q in quotes], dtype=np.float64)
    if len(np.unique(days)) < 2:
        return None
    t = (days - days.min()) / 365.25
    y = np.log(np.array([q.price_per_gpu_hour for q in quotes]))
    terms = np.array([q.term_months or 0 for q in quotes])
    tc, yc = t.copy(), y.copy()
    for term in np.unique(terms):  # demean within each term: one level per term
        sel = terms == term
        tc[sel] -= t[sel].mean()
        yc[sel] -= y[sel].mean()
    n, dof = len(y), len(y) - 1 - len(np.unique(terms))
    sxx = float((tc**2).sum())
    if dof < 1 or sxx <= 0:
        return None
    b = float((tc * yc).sum() / sxx)
    resid = yc - b * tc
    se = math.sqrt(float((resid**2).sum()) / dof / sxx)
    q0 = quotes[0]
    return Trend(q0.gpu, q0.mode, q0.currency, n, min(q.quoted_on for q in quotes).isoformat(),
                 max(q.quoted_on for q in quotes).isoformat(), math.expm1(b), math.expm1(b - Z90 * se),
                 math.expm1(b + Z90 * se), se)


def fit_trends(quotes: Sequence[Quote]) -> list[Trend]:
    """One fit per (GPU, mode, currency) group that has enough quotes, sorted."""
    groups: dict[tuple[str, str, str], list[Quote]] = defaultdict(list)
    for q in quotes:
        groups[(q.gpu, q.mode, q.currency)].append(q)
    out = [f for key in sorted(groups) if (f := fit(groups[key])) is not None]
    return out


def drift_ranges(trends: Sequence[Trend], gpus: Sequence[str]) -> dict[str, tuple[float, float]]:
    """The `commit` ranges (container, bare_metal) from the fits of the scenario's GPUs: per mode, the fit
    with the most quotes among them."""
    out: dict[str, tuple[float, float]] = {}
    for mode, key in (("container", "container"), ("bare-metal", "bare_metal")):
        fits = [f for f in trends if f.mode == mode and f.gpu in set(gpus)]
        if fits:
            best = max(fits, key=lambda f: (f.n, f.gpu))
            out[key] = (max(best.low, -0.99), best.high)
    return out
