"""The bundled catalog (issue 12): today's accelerators and reference offers, each with its source."""

from __future__ import annotations

import re

import pytest

from gpuplan.inputs.catalog import load_catalog
from gpuplan.inputs.scenario import scenario_from_text

CAT = load_catalog()
OFFERS = {k: {kk: vv for kk, vv in v.items() if not kk.startswith("_")} for k, v in CAT.offers.items()}
AS_OF = re.compile(r"^20\d\d-(0[1-9]|1[0-2])(-\d\d)?$")


def test_at_least_40_accelerators_across_the_vendors_the_issue_names() -> None:
    assert len(CAT.gpus) >= 40
    for gpu_id in ("v100-16g", "a100-80g", "h100-sxm", "h100-pcie", "h100-nvl", "h200-sxm", "b200", "b300", "gb200",
                   "a800-80g", "h800-sxm", "h20", "l20", "l4", "l40s", "a10", "t4", "mi210", "mi250x", "mi300x",
                   "mi325x", "mi355x", "gaudi2", "gaudi3", "ascend-910b", "ascend-910c", "rtx-3090", "rtx-4090",
                   "rtx-5090"):
        assert gpu_id in CAT.gpus, gpu_id
    assert {g.vendor for g in CAT.gpus.values()} == {"nvidia", "amd", "intel", "huawei"}


@pytest.mark.parametrize("gpu_id", sorted(CAT.gpus))
def test_every_gpu_has_a_source_a_date_and_plausible_figures(gpu_id: str) -> None:
    g = CAT.gpus[gpu_id]
    assert g.source.strip() and AS_OF.match(g.as_of), gpu_id
    assert 8 <= g.memory_gb <= 300 and 0.2 <= g.hbm_tbs <= 10 and 30 <= g.bf16_tflops <= 3000
    # a source without a URL is a secondary or derived figure and must say it is an estimate
    assert "http" in g.source or g.estimate, gpu_id


def test_b200_is_the_part_as_shipped_not_as_announced() -> None:
    b200 = CAT.gpus["b200"]
    assert b200.memory_gb == 180 and 7.7 <= b200.hbm_tbs <= 8.0
    # faster parts have more bandwidth than the parts they replace
    assert CAT.gpus["h200-sxm"].hbm_tbs > CAT.gpus["h100-sxm"].hbm_tbs > CAT.gpus["a100-80g"].hbm_tbs
    assert CAT.gpus["mi355x"].bf16_tflops > CAT.gpus["mi300x"].bf16_tflops > CAT.gpus["mi250x"].bf16_tflops


def test_at_least_40_offers_from_12_providers_china_and_international() -> None:
    assert len(OFFERS) >= 40
    providers = {o["provider"] for o in OFFERS.values()}
    assert len(providers) >= 12
    for p in ("AutoDL", "Alibaba Cloud", "Volcano Engine", "Tencent Cloud", "Huawei Cloud", "AWS", "Google Cloud",
              "Azure", "Lambda", "RunPod", "CoreWeave", "Vast.ai", "China Telecom Cloud"):
        assert p in providers, p
    assert {o["mode"] for o in OFFERS.values()} == {"container", "vm", "bare-metal"}
    assert {o["currency"] for o in OFFERS.values()} == {"CNY", "USD"}


def test_the_offers_tests_and_examples_use_are_still_there() -> None:
    for oid in ("seed-910b-bare-metal", "seed-910b-container", "aws-p5-h100", "aws-p4de-a100", "azure-nd-h100-v5",
                "lambda-h100-sxm", "lambda-b200", "runpod-h200", "autodl-a800", "autodl-4090",
                "gongji-4090-bare-metal", "smm-h100-bare-metal", "smm-a100-bare-metal", "smm-910b-bare-metal"):
        assert oid in OFFERS


@pytest.mark.parametrize("offer_id", sorted(OFFERS))
def test_every_offer_has_a_source_and_loads_into_a_scenario(offer_id: str) -> None:
    o = OFFERS[offer_id]
    assert str(o["source"]).strip() and AS_OF.match(str(o["as_of"])), offer_id
    assert o["gpu"] in CAT.gpus
    text = (f"version: 1\ncurrency: {o['currency']}\noffers:\n  - use: {offer_id}\nworkloads:\n"
            f"  - {{id: w, kind: training, gpu: {o['gpu']}, gpus: 8, hours_per_day: 8, duration: 30d}}\n")
    sc = scenario_from_text(text, name=f"{offer_id}.yaml")
    offer = sc.offers[0]
    assert offer.id == offer_id and offer.source == o["source"]
    assert offer.price_per_gpu_hour.low > 0 and offer.price_per_gpu_hour.low <= offer.price_per_gpu_hour.high


def test_an_offer_in_another_currency_needs_a_price_in_the_scenarios() -> None:
    from gpuplan.errors import ScenarioError

    text = ("version: 1\ncurrency: CNY\noffers:\n  - use: aws-g6-l4\nworkloads:\n"
            "  - {id: w, kind: inference, gpu: L4, gpus: 1, hours_per_day: 8, duration: 30d}\n")
    with pytest.raises(ScenarioError, match="priced in USD and the scenario gives no USD rate"):
        scenario_from_text(text)
