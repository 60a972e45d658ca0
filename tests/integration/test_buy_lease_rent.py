"""issue 28's done-when, end to end: examples/buy-lease-rent.yaml through `gpuplan compare`.

A bought 8 x H100 node (250,000 USD, 4-year life, 30% resale, 10.2 kW, colocation) against a lease and
the cloud for three years: at 24 h a day buying wins, at 7 h a day renting wins, and every cost item
and the break-even utilisation are printed. The hand arithmetic of the same model is in
tests/unit/test_owned.py; here the example's own figures are checked against it:
    capex     = 250,000 x 0.7 / 35,040 h = 4.99429 USD/node-h; 3 years held + the calendar's slack
    colocation= 1,500 / 720 h            = 2.08333 USD/node-h
    power     = 10.2 x 1.3 x 0.10        = 1.326 USD/node-h busy, 0.4641 idle
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuplan.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "buy-lease-rent.yaml"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    capsys.readouterr()
    rc = main(list(argv))
    out = capsys.readouterr()
    assert rc == 0, out.err
    return out.out


def test_buy_wins_around_the_clock_and_renting_wins_at_seven_hours(capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(_run(capsys, "compare", str(EXAMPLE), "-o", "json"))
    by_id = {w["id"]: w for w in doc["workloads"]}
    day, night = by_id["around-the-clock"], by_id["office-hours"]
    assert day["recommendation"]["offer"] == "own-h100"
    assert night["recommendation"]["mode"] == "container"
    own = next(o for o in day["options"] if o["offer"] == "own-h100")["cost"]
    # every item, and they add up: capex + power + colocation = rental; rental + ops + setup = total
    assert own["capex"] + own["power"] + own["colocation"] == pytest.approx(own["rental"], abs=0.05)
    assert own["rental"] + own["ops"] + own["setup"] == pytest.approx(own["total"], abs=0.05)
    hours_held = own["capex"] / (250000 * 0.7 / 35040)
    assert hours_held == pytest.approx(own["colocation"] / (1500 / 720), rel=1e-6)
    assert 3 * 8760 <= hours_held <= 3 * 8760 * 1.01  # three years held (plus the repairs' slack)
    # running all but the repairs' hours: power at most the full draw, at least 99% of it
    assert 0.99 * 1.326 * hours_held <= own["power"] <= 1.326 * hours_held
    for w in (day, night):
        buy = {b["other"]: b for b in w["break_even"]["buy"]}
        assert set(buy) == {"lease-h100", "cloud-h100", "market-h100"}
        assert buy["lease-h100"]["buy_wins"] == "always"
        assert 7 < buy["market-h100"]["hours_per_day"] < 24 and buy["market-h100"]["buy_wins"] == "above"


def test_table_prints_every_item_and_the_break_even(capsys: pytest.CaptureFixture[str]) -> None:
    out = " ".join(_run(capsys, "compare", str(EXAMPLE), "--explain").split())
    for word in ("capex =", "power =", "colocation", "ops =", "breaks even with renting market-h100 at",
                 "costs less than renting lease-h100 at any hours a day"):
        assert word in out, word


def test_the_decision_pack_says_buy_for_bought_servers() -> None:
    from gpuplan import api

    pack = api.report(Path(__file__).resolve().parents[2] / "examples" / "buy-lease-rent.yaml", paths=200)
    s = pack.summary
    assert [(b["offer"], b["cards"]) for b in s["buy"]] == [("own-h100", 8)]
    assert s["lease"] == [] and all(r["offer"] != "own-h100" for r in s["sign"])
