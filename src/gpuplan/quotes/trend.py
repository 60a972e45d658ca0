"""The price drift a quote history shows, per (GPU, mode), with its uncertainty.

Quotes at different lease terms are first put on one footing by a term-discount curve, so one quote per
term still counts:

    ln(price per GPU-hour) = a + d * ln(term months) + b * t + e      t: years since the first quote;
                                                                      a quote with no term is 1 month
    d (the curve)   fitted with the drift when the group has >= 2 terms and >= 5 quotes; otherwise the
                    default TERM_DISCOUNT, from published yearly discounts (below)
    drift a year    = exp(b) - 1
    se(b)           = sqrt(sum e^2 / dof / sxx)         least squares; dof = n - 2 (- 1 when d is fitted)
    range           = exp(b -/+ 1.645 se(b)) - 1        a 90% interval
    volatility      sqrt( sum_i (dy_i - b dt_i)^2 / dt_i / (k - 1) )   a year: the quadratic variation of
                    the term-normalised log price between successive quote days (a day's quotes averaged),
                    around the drift; k increments, at least 2 (else 0). Quotes from different providers
                    on nearby days add their spread to it, so it is an upper estimate for one vendor.

A group needs at least 3 quotes on at least 2 different days; fewer give no fit.
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
# d in price ~ term^d, least squares through the 1-month list price of China Telecom Cloud's published
# yearly discounts for NVIDIA instances (1 y 85%, 2 y 70%, 3 y 50% of list): d = -0.138.
TERM_DISCOUNT = -0.138
TERM_DISCOUNT_SOURCE = "China Telecom Cloud yearly discounts (ctyun.cn doc 10029787), as of 2026-06"


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
    term_discount: float = TERM_DISCOUNT
    term_discount_fitted: bool = False
    volatility: float = 0.0  # a year

    def to_json(self) -> dict[str, Any]:
        return {"gpu": self.gpu, "mode": self.mode, "currency": self.currency, "quotes": self.n,
                "first": self.first, "last": self.last, "drift_per_year": round(self.drift, 4),
                "drift_low": round(self.low, 4), "drift_high": round(self.high, 4),
                "se_log_slope": round(self.se_log, 4), "volatility": round(self.volatility, 4),
                "term_discount": round(self.term_discount, 4),
                "term_discount_source": "fitted" if self.term_discount_fitted else TERM_DISCOUNT_SOURCE}


def fit(quotes: Sequence[Quote]) -> Trend | None:
    """The term-normalised log-linear fit of one group (None when it has too few quotes or days)."""
    if len(quotes) < MIN_QUOTES:
        return None
    days = np.array([q.quoted_on.toordinal() for q in quotes], dtype=np.float64)
    if len(np.unique(days)) < 2:
        return None
    t = (days - days.min()) / 365.25
    y = np.log(np.array([q.price_per_gpu_hour for q in quotes]))
    lterm = np.log(np.array([q.term_months or 1 for q in quotes], dtype=np.float64))
    n = len(y)
    fitted = len(np.unique(lterm)) >= 2 and n >= 5
    if fitted:
        x = np.column_stack([np.ones(n), lterm, t])
        if np.linalg.matrix_rank(x) < 3:
            fitted = False
    if fitted:
        coef, *_ = np.linalg.lstsq(x, y, rcond=None)
        d = float(coef[1])
        resid = y - x @ coef
        dof = n - 3
        cov = float((resid**2).sum()) / dof * np.linalg.inv(x.T @ x)
        b, se = float(coef[2]), math.sqrt(max(float(cov[2, 2]), 0.0))
    else:
        d = TERM_DISCOUNT
        yn = y - d * lterm
        tc = t - t.mean()
        sxx = float((tc**2).sum())
        dof = n - 2
        if dof < 1 or sxx <= 0:
            return None
        b = float((tc * (yn - yn.mean())).sum() / sxx)
        resid = yn - yn.mean() - b * tc
        se = math.sqrt(float((resid**2).sum()) / dof / sxx)
    q0 = quotes[0]
    return Trend(q0.gpu, q0.mode, q0.currency, n, min(q.quoted_on for q in quotes).isoformat(),
                 max(q.quoted_on for q in quotes).isoformat(), math.expm1(b), math.expm1(b - Z90 * se),
                 math.expm1(b + Z90 * se), se, d, fitted, _volatility(t, y - d * lterm, b))


def _volatility(t: np.ndarray, y: np.ndarray, b: float) -> float:
    """The yearly volatility of the module docstring from times `t` (years) and normalised log prices."""
    days, inv = np.unique(t, return_inverse=True)
    level = np.bincount(inv, weights=y) / np.bincount(inv)
    dt, dy = np.diff(days), np.diff(level)
    if len(dt) < 2:
        return 0.0
    return math.sqrt(float(((dy - b * dt) ** 2 / dt).sum()) / (len(dt) - 1))


def fit_trends(quotes: Sequence[Quote]) -> list[Trend]:
    """One fit per (GPU, mode, currency) group that has enough quotes, sorted."""
    groups: dict[tuple[str, str, str], list[Quote]] = defaultdict(list)
    for q in quotes:
        groups[(q.gpu, q.mode, q.currency)].append(q)
    out = [f for key in sorted(groups) if (f := fit(groups[key])) is not None]
    return out


def drift_ranges(trends: Sequence[Trend], gpus: Sequence[str]) -> dict[str, tuple[float, float]]:
    """The `commit` ranges (container, bare_metal, and their `*_volatility` as (v, v)) from the fits of the
    scenario's GPUs: per tier, the fit
    with the most quotes among them (hourly VMs stand for containers when no container quote fits)."""
    out: dict[str, tuple[float, float]] = {}
    for modes, key in ((("container", "vm"), "container"), (("bare-metal",), "bare_metal")):
        for mode in modes:
            fits = [f for f in trends if f.mode == mode and f.gpu in set(gpus)]
            if fits:
                best = max(fits, key=lambda f: (f.n, f.gpu))
                out[key] = (max(best.low, -0.99), best.high)
                out[f"{key}_volatility"] = (best.volatility, best.volatility)
                break
    return out
