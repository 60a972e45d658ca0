"""A scenario's exchange rates (`fx:`) convert catalog offers priced in another currency, and say so."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplan.errors import ScenarioError
from gpuplan.inputs.catalog import load_catalog
from gpuplan.inputs.scenario import scenario_from_text

SCENARIO = """version: 1
currency: CNY
{fx}offers:
  - use: aws-p5-h100
  - use: smm-h100-bare-metal
workloads:
  - {{id: w, kind: training, gpu: H100, gpus: 8, hours_per_day: 8, duration: 30d}}
"""


def test_a_usd_offer_is_converted_with_the_scenarios_rate_and_names_it() -> None:
    sc = scenario_from_text(SCENARIO.format(fx="fx: {USD: 7.1, as_of: 2026-11-01}\n"), "s.yaml")
    aws = sc.offer("aws-p5-h100")
    usd = load_catalog().offers["aws-p5-h100"]["price"]["amount"]
    assert aws.price_per_gpu_hour.low == pytest.approx(usd * 7.1)
    note = "price: 6.88 USD/gpu-hour converted at 7.1 CNY/USD (scenario fx, as of 2026-11-01)"
    assert note in aws.defaults_used and aws.source and aws.source.endswith(note)
    # the CNY offer is untouched
    smm = sc.offer("smm-h100-bare-metal")
    assert smm.price_amount.low == 75000 and not any("converted" in d for d in smm.defaults_used)


def test_a_range_is_converted_end_to_end(tmp_path: Path) -> None:
    extra = tmp_path / "c.yaml"
    extra.write_text("version: 1\noffers:\n  - {id: eu-quote, gpu: H100, mode: bare-metal, currency: EUR,"
                     " price: {amount: [1.5, 2.0], per: gpu-hour}, source: mail, as_of: 2026-11}\n")
    text = SCENARIO.format(fx="fx: {USD: 7.1, EUR: 7.7}\n").replace("use: smm-h100-bare-metal", "use: eu-quote")
    sc = scenario_from_text(text, "s.yaml", catalog=load_catalog(extra))
    eu = sc.offer("eu-quote")
    assert (eu.price_amount.low, eu.price_amount.high) == (pytest.approx(11.55), pytest.approx(15.4))
    assert "converted at 7.7 CNY/EUR (scenario fx)" in (eu.source or "")


def test_without_a_rate_the_offer_is_an_error_naming_the_currency() -> None:
    for fx in ("", "fx: {EUR: 7.7}\n"):
        with pytest.raises(ScenarioError) as info:
            scenario_from_text(SCENARIO.format(fx=fx), "s.yaml")
        err = info.value
        assert err.field == "offers[0].use" and "priced in USD" in err.message and "no USD rate" in err.message
        assert err.hint and "fx: {USD: <CNY per USD>" in err.hint


def test_a_price_in_the_scenario_is_not_converted() -> None:
    text = SCENARIO.format(fx="").replace("  - use: aws-p5-h100\n",
                                          "  - use: aws-p5-h100\n    price: {amount: 50, per: gpu-hour}\n")
    assert scenario_from_text(text).offer("aws-p5-h100").price_per_gpu_hour.low == 50


@pytest.mark.parametrize(("fx", "field", "message"), [
    ("fx: {USD: -1}\n", "fx.USD", "a rate must be a number > 0"),
    ("fx: {USD: yes}\n", "fx.USD", "a rate must be a number > 0"),
    ("fx: {usd: 7}\n", "fx.usd", "not a currency code"),
    ("fx: {CNY: 1}\n", "fx.CNY", "the scenario's own currency"),
    ("fx: [7.1]\n", "fx", "fx must be a mapping"),
])
def test_bad_rates_name_the_field(fx: str, field: str, message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        scenario_from_text(SCENARIO.format(fx=fx), "s.yaml")
    assert info.value.field == field and message in info.value.message and info.value.line == 3


def test_the_cli_exits_2_without_a_rate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from gpuplan.cli import main

    scen = tmp_path / "s.yaml"
    scen.write_text(SCENARIO.format(fx=""))
    assert main(["compare", str(scen)]) == 2
    assert "no USD rate" in capsys.readouterr().err
    scen.write_text(SCENARIO.format(fx="fx: {USD: 7.1, as_of: 2026-11-01}\n"))
    assert main(["compare", str(scen), "--explain"]) == 0
    assert "converted at 7.1 CNY/USD" in " ".join(capsys.readouterr().out.split())
