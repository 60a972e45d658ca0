"""The quote history on the web page: the quotes of one (GPU, mode) as a price-history chart with the
fitted trend (the fit `gpuplan quotes trend` prints: one level per lease term, one slope).

The line of each term is the least-squares line of that fit: through the term's mean (day, log price) with
the fit's slope, ln(1 + drift a year) per year, drawn from the term's first quote to its last. The drift
comes from `api.quotes_trend`; only the level of each term (a mean) is taken here.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from datetime import date
from typing import Any

from gpuplan.i18n import t
from gpuplan.quotes import MODES

DAYS_PER_YEAR = 365.25


def history(quotes: list[dict[str, Any]], trend: dict[str, Any] | None, gpu: str, mode: str) -> dict[str, Any]:
    """The chart's data for the quotes (`Quote.to_json()` dicts) of one GPU and mode: the currency most of
    them are in, one series per term with its points and fitted line, and the trend (None when it has none)."""
    mine = [q for q in quotes if q["gpu"] == gpu and q["mode"] == mode]
    if not mine:
        return {"gpu": gpu, "mode": mode, "currency": None, "quotes": 0, "trend": None, "series": [],
                "other_currencies": []}
    counts = Counter(q["currency"] for q in mine)
    currency = max(counts, key=lambda c: (counts[c], c))
    mine = [q for q in mine if q["currency"] == currency]
    slope = math.log1p(trend["drift_per_year"]) if trend is not None else None
    by_term: dict[int | None, list[dict[str, Any]]] = defaultdict(list)
    for q in mine:
        by_term[q["term_months"]].append(q)
    series = []
    for term in sorted(by_term, key=lambda k: (k is not None, k or 0)):
        qs = by_term[term]
        days = [date.fromisoformat(q["date"]).toordinal() for q in qs]
        prices = [float(q["price_per_gpu_hour"]) for q in qs]
        fit: list[list[Any]] = []
        if slope is not None and len(set(days)) >= 2:
            d_mean = sum(days) / len(days)
            y_mean = sum(math.log(p) for p in prices) / len(prices)
            for d in (min(days), max(days)):
                fit.append([date.fromordinal(d).isoformat(),
                            round(math.exp(y_mean + slope * (d - d_mean) / DAYS_PER_YEAR), 6)])
        series.append({"term_months": term,
                       "points": [[date.fromordinal(d).isoformat(), p] for d, p in zip(days, prices, strict=True)],
                       "fit": fit})
    return {"gpu": gpu, "mode": mode, "currency": currency, "quotes": len(mine), "trend": trend, "series": series,
            "other_currencies": sorted(c for c in counts if c != currency)}


def groups(quotes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each (GPU, mode) the quotes have, with how many: the chart's choices."""
    counts = Counter((q["gpu"], q["mode"]) for q in quotes)
    return [{"gpu": g, "mode": m, "quotes": counts[(g, m)]}
            for g, m in sorted(counts, key=lambda k: (k[0], MODES.index(k[1]) if k[1] in MODES else 9, k[1]))]


def history_svg(data: dict[str, Any], lang: str) -> str:
    """The price-history chart: each term's quotes as dots, its fitted line dashed ("" without quotes)."""
    from gpuplan.render.svg import PALETTE, Chart, Line, line_chart

    if not data["series"]:
        return ""

    def day(x: str) -> float:
        return float(date.fromisoformat(x).toordinal())

    lines = []
    for i, s in enumerate(data["series"]):
        color = PALETTE[i % len(PALETTE)]
        term = t("web.quotes_term", lang, n=s["term_months"]) if s["term_months"] else t("web.quotes_no_term", lang)
        lines.append(Line(term, [(day(d), p) for d, p in s["points"]], color, dots=True, width=0.0))
        if s["fit"]:
            lines.append(Line(t("web.quotes_fit", lang, term=term), [(day(d), p) for d, p in s["fit"]], color,
                              dash=True, width=1.5))
    tr = data["trend"]
    title = f"{data['gpu']} · {data['mode']}"
    if tr is not None:
        title += " · " + t("web.quotes_drift", lang, drift=f"{tr['drift_per_year']:+.1%}",
                           low=f"{tr['drift_low']:+.1%}", high=f"{tr['drift_high']:+.1%}")
    xs = sorted({day(d) for s in data["series"] for d, _ in s["points"]})
    return line_chart(Chart(
        title=title, x_label=t("web.quotes_date", lang),
        y_label=t("web.quotes_per_gpu_hour", lang, currency=data["currency"]),
        x_fmt=lambda x: date.fromordinal(int(round(x))).isoformat()[:7], y_fmt=lambda y: f"{y:,.4g}",
        x_ticks=_month_ticks(xs[0], xs[-1]), y_zero=False, lines=lines))


def _month_ticks(lo: float, hi: float, n: int = 6) -> list[float]:
    """First days of months from the month of `lo` to the month after `hi`, about `n` of them."""
    a, b = date.fromordinal(int(lo)), date.fromordinal(int(hi))
    months = (b.year - a.year) * 12 + b.month - a.month + 1
    step = max(1, math.ceil(months / (n - 1)))
    out = []
    k = 0
    while True:
        y, m = divmod(a.month - 1 + k, 12)
        d = date(a.year + y, m + 1, 1)
        out.append(float(d.toordinal()))
        if d > b:
            return out
        k += step
