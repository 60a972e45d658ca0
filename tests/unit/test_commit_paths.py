"""`commit` v2: prices as a random walk (bands), exit clauses used along each path, volatility calibrated
from a quote history, and the bundled price-history example."""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from gpuplan import api
from gpuplan.quotes import Quote
from gpuplan.quotes.trend import fit

ROOT = Path(__file__).resolve().parents[2]

STEADY = """version: 1
currency: CNY
offers:
  - id: bm
    gpu: ascend-910b
    mode: bare-metal
    price: {amount: 150, per: gpu-day}
    terms:
      - {length: 12mo, price: {amount: 150, per: gpu-day}, early_exit: 0.3}
  - {id: ct, gpu: ascend-910b, mode: container, price: {amount: 10, per: gpu-hour}}
workloads:
  - {id: core, kind: training, gpu: ascend-910b, gpus: 8, hours_per_day: 24, duration: 30d}
market:
  horizon: HORIZON
MARKET
"""


def _scenario(tmp_path: Path, market: str, horizon: str = "12mo") -> Path:
    p = tmp_path / "s.yaml"
    p.write_text(STEADY.replace("HORIZON", horizon).replace("MARKET", market), encoding="utf-8")
    return p


def test_the_same_seed_gives_the_same_bands_and_ladder(tmp_path: Path) -> None:
    s = _scenario(tmp_path, "  container_price_drift: [-0.3, 0.0]\n  container_price_volatility: 0.4\n")
    a = api.commit(s, paths=500, seed=3).to_json()
    b = api.commit(s, paths=500, seed=3).to_json()
    c = api.commit(s, paths=500, seed=4).to_json()
    assert a["bands"] == b["bands"] and a["ladders"] == b["ladders"] and a["cost"] == b["cost"]
    assert a["bands"] != c["bands"]


def test_band_width_grows_with_the_horizon_under_volatility(tmp_path: Path) -> None:
    s = _scenario(tmp_path, "  container_price_volatility: 0.5\n  bare_metal_price_volatility: 0.5\n", "25mo")
    doc = api.commit(s, paths=4000, seed=1).to_json()
    for band in doc["bands"]:
        width = [hi - lo for lo, hi in zip(band["p10"], band["p90"], strict=True)]
        assert width[0] == pytest.approx(0.0, abs=1e-9)  # month 0 is today's price
        assert width[24] >= 2 * width[1]
        # no drift: the median stays at today's price (log-symmetric walk), within sampling error
        assert band["p50"][24] == pytest.approx(band["p50"][0], rel=0.08)
    # hand arithmetic: ln price at month 24 ~ N(0, 0.5^2 x 2): p90/p50 = exp(1.2816 x 0.5 x sqrt 2)
    ct = next(b for b in doc["bands"] if b["tier"] == "container")
    assert ct["p90"][24] / ct["p50"][24] == pytest.approx(math.exp(1.2816 * 0.5 * math.sqrt(2)), rel=0.06)


def test_without_volatility_the_band_is_the_drift_range(tmp_path: Path) -> None:
    s = _scenario(tmp_path, "  container_price_drift: [-0.3, -0.1]\n")
    ct = next(b for b in api.commit(s, paths=4000, seed=2).to_json()["bands"] if b["tier"] == "container")
    # uniform drift in [-30%, -10%]: p10 and p90 at month 12 are 10 x (1 - 0.28) and 10 x (1 - 0.12)
    assert ct["p10"][11] == pytest.approx(10 * 0.72 ** (11 / 12), rel=0.01)
    assert ct["p90"][11] == pytest.approx(10 * 0.88 ** (11 / 12), rel=0.01)


def test_an_exit_clause_is_used_when_container_prices_fall_steeply(tmp_path: Path) -> None:
    s = _scenario(tmp_path, "  container_price_drift: [-0.8, -0.5]\n  container_price_volatility: 0.3\n")
    doc = api.commit(s, paths=2000, seed=0).to_json()
    assert doc["ladders"], "a lease at 150 a card-day against containers at 240 is signed today"
    assert doc["cost"]["expected"] < doc["against"]["no_exit"]["expected"]
    assert max(x["exit_probability"] for x in doc["ladders"]) > 0
    assert any("exit" in r for r in doc["reasons"])
    # without an exit clause there is nothing to use
    s2 = _scenario(tmp_path, "  container_price_drift: [-0.8, -0.5]\n  container_price_volatility: 0.3\n")
    s2.write_text(s2.read_text().replace(", early_exit: 0.3", ""), encoding="utf-8")
    doc2 = api.commit(s2, paths=2000, seed=0).to_json()
    assert "no_exit" not in doc2["against"] and all(x["exit_probability"] == 0 for x in doc2["ladders"])
    assert doc2["cost"]["expected"] >= doc["cost"]["expected"]


def _quote(day: date, price: float) -> Quote:
    return Quote("p", "h100-sxm", "container", None, price, "gpu-hour", price, "USD", day)


def test_volatility_is_calibrated_from_a_random_walk_of_known_sigma() -> None:
    rng = np.random.default_rng(7)
    sigma, weeks = 0.4, 520  # ten years of weekly quotes
    steps = rng.standard_normal(weeks) * sigma * math.sqrt(7 / 365.25)
    logp = np.concatenate([[0.0], np.cumsum(steps)])
    quotes = [_quote(date.fromordinal(date(2016, 1, 4).toordinal() + 7 * i), 3.0 * math.exp(y))
              for i, y in enumerate(logp)]
    f = fit(quotes)
    assert f is not None and f.volatility == pytest.approx(sigma, rel=0.1)


def test_the_history_example_falls_and_rebounds_inside_its_band() -> None:
    quotes = api.quotes_read_csv(ROOT / "examples" / "h100-history-quotes.csv")
    history = {q.quoted_on: q.price_per_gpu_hour for q in quotes}
    start = date(2024, 2, 1)
    low_day, end_day = date(2025, 10, 1), date(2026, 3, 1)
    assert history[low_day] / history[start] <= 0.7  # a fall of 30% or more
    assert history[end_day] / history[low_day] >= 1.2  # then a rise of 20% or more
    doc = api.commit(ROOT / "examples" / "h100-history.yaml", quotes=ROOT / "examples" / "h100-history-quotes.csv",
                     paths=3000, seed=0).to_json()
    band = next(b for b in doc["bands"] if b["tier"] == "container")
    assert band["p50"][0] == pytest.approx(history[start])  # the scenario's price is the start of the history
    for day in (low_day, end_day):
        m = (day.year - start.year) * 12 + day.month - start.month
        assert band["p10"][m] <= history[day] <= band["p90"][m], (day, m)
