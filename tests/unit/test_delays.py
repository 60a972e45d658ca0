"""Data gravity and interruptions (issue 17): models.delays, the scenario's sites, and the verdict."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplan import api
from gpuplan.errors import ScenarioError
from gpuplan.inputs.catalog import load_catalog
from gpuplan.inputs.scenario import scenario_from_text
from gpuplan.inputs.scenario_types import Link
from gpuplan.inputs.sites import route
from gpuplan.models.delays import interruptions, transfer

CAT = load_catalog()

ARTICLE = """
version: 1
currency: CNY
team: {{engineer_hour_cost: 150, researcher_hour_cost: 200}}
sites:
  - {{id: idc-core}}
  - {{id: idc-remote}}
links:
  - {{from: idc-core, to: idc-remote, gbps: 1, cost_per_gb: 0.01, latency_ms: 30}}
offers:
  - {{id: ct-core, gpu: ascend-910b, mode: container, site: idc-core, price: {{amount: 10, per: gpu-hour}}}}
  - {{id: bm-remote, gpu: ascend-910b, mode: bare-metal, site: idc-remote, price: {{amount: 180, per: gpu-day}},
     min_term: 30d, network: {{gbps: 1600, rdma: roce}}}}
workloads:
  - {{id: pretrain, kind: training, gpu: ascend-910b, gpus: 16, hours_per_day: 20, duration: 60d,
     data: {{size_gb: 50000, site: idc-core, moves: {moves}}}, checkpoint_interval: 2h}}
"""


def _compare(tmp_path, text: str):  # type: ignore[no-untyped-def]
    p = tmp_path / "s.yaml"
    p.write_text(text, encoding="utf-8")
    return api.compare(p)


def test_article_data_gravity_container_at_the_data_beats_remote_bare_metal(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (adv,) = _compare(tmp_path, ARTICLE.format(moves="per-run")).advice
    assert adv.recommendation is not None and adv.recommendation.offer == "ct-core"
    keys = [n.key for n in adv.recommendation.reasons]
    assert "r_data" in keys
    bm = next(r for r in adv.options if r.offer.id == "bm-remote")
    # 60 working sessions x 50,000 GB x 8 / 1 Gbit/s
    assert bm.cost.transfer.moves == 60
    assert bm.cost.transfer.hours == pytest.approx(60 * 50_000 * 8 / 1 / 3600)
    assert bm.cost.transfer.cost == pytest.approx(60 * 50_000 * 0.01)
    ct = next(r for r in adv.options if r.offer.id == "ct-core")
    assert ct.cost.transfer.hours == 0 and ct.cost.transfer.cost == 0


def test_article_data_moved_once_bare_metal_wins_back(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (adv,) = _compare(tmp_path, ARTICLE.format(moves="once")).advice
    assert adv.recommendation is not None and adv.recommendation.offer == "bm-remote"
    bm = next(r for r in adv.options if r.offer.id == "bm-remote")
    assert bm.cost.transfer.hours == pytest.approx(50_000 * 8 / 3600)
    # the move before the first step stretches the calendar (and the lease) by its hours
    assert bm.cost.wall_hours >= bm.offer.setup_hours + 60 * 24 + bm.cost.transfer.hours - 1e-6


def test_transfer_uses_the_slower_of_route_and_node_network() -> None:
    text = ARTICLE.format(moves="daily").replace("gbps: 1,", "gbps: 2000,")
    s = scenario_from_text(text, catalog=CAT)
    w = s.workloads[0]
    tr = transfer(w, s.offer("bm-remote"), s, 60)
    assert tr.gbps == 1600 and tr.moves == 60 and tr.path == ("idc-core", "idc-remote")


def test_routes_multi_hop_and_one_way() -> None:
    links = (Link("a", "b", 10, 0.1, None, False), Link("b", "c", 1, 0.2, None, True))
    r = route(links, "a", "c")
    assert r is not None and r.hops == ("a", "b", "c") and r.gbps == 1 and r.cost_per_gb == pytest.approx(0.3)
    assert route(links, "c", "a") is None  # b -> c is one way
    assert route(links, "a", "a") is not None and route(links, "a", "a").links == ()  # type: ignore[union-attr]


@pytest.mark.parametrize(("edit", "field"), [
    (("to: idc-remote, gbps: 1", "to: nowhere, gbps: 1"), "links[0].to"),
    (("site: idc-remote,", "site: mars,"), "offers[1].site"),
    (("site: idc-core, moves", "site: moon, moves"), "workloads[0].data.site"),
    (("size_gb: 50000", "size_gb: -5"), "workloads[0].data.size_gb"),
    (("- {from: idc-core, to: idc-remote, gbps: 1, cost_per_gb: 0.01, latency_ms: 30}",
      "- {from: idc-core, to: idc-core, gbps: 1}"), "workloads[0].data.site"),
])
def test_bad_sites_are_clear_errors(edit: tuple[str, str], field: str) -> None:
    text = ARTICLE.format(moves="once")
    assert edit[0] in text
    with pytest.raises(ScenarioError) as exc:
        scenario_from_text(text.replace(*edit), catalog=CAT)
    assert exc.value.field == field


def test_remote_data_offer_needs_no_route() -> None:
    text = ARTICLE.format(moves="once").replace("- {from: idc-core, to: idc-remote, gbps: 1, cost_per_gb: 0.01, "
                                                "latency_ms: 30}", "[]").replace("links:\n  [", "links: [")
    text = text.replace("site: idc-remote,", "site: idc-remote, remote_data: true,")
    s = scenario_from_text(text, catalog=CAT)
    assert transfer(s.workloads[0], s.offer("bm-remote"), s, 60).hours == 0


SUPPORT = """
version: 1
currency: USD
offers:
  - {{id: bm, gpu: h100-sxm, mode: bare-metal, price: {{amount: 2, per: gpu-hour}}, spares: {spares},
     support: {{response: {response}h, coverage: {coverage}}}}}
  - {{id: ct, gpu: h100-sxm, mode: container, price: {{amount: 4, per: gpu-hour}}}}
workloads:
  - {{id: big, kind: training, gpu: h100-sxm, gpus: {gpus}, hours_per_day: 24, duration: 90d}}
"""


@settings(max_examples=40, deadline=None)
@given(gpus=st.integers(8, 4096), spares=st.integers(0, 3), response=st.floats(0.5, 72),
       faster=st.floats(0.0, 0.9), coverage=st.sampled_from(["24x7", "business-hours"]))
def test_more_spares_or_faster_support_never_lengthen_a_run(gpus: int, spares: int, response: float, faster: float,
                                                            coverage: str) -> None:
    def wall(sp: int, resp: float) -> float:
        s = scenario_from_text(SUPPORT.format(spares=sp, response=resp, coverage=coverage, gpus=gpus), catalog=CAT)
        return api.compare(s, catalog=CAT).advice[0].options[0].cost.wall_hours

    base = wall(spares, response)
    assert wall(spares + 1, response) <= base + 1e-9
    assert wall(spares, response * (1 - faster)) <= base + 1e-9


def test_interruptions_from_the_llama3_rate() -> None:
    s = scenario_from_text(SUPPORT.format(spares=0, response=4, coverage="24x7", gpus=16384), catalog=CAT)
    w, o = s.workloads[0], s.offer("bm")
    it = interruptions(w, o, 54 * 24)
    assert it.expected == pytest.approx(419, rel=0.01)  # the published 54-day count
    assert it.lost_hours == pytest.approx(it.expected * 1.0 / 2)  # half the 1 h default checkpoint interval
    assert it.recovery_hours == pytest.approx(it.expected * (4 + 4))  # 4 h response + 4 h repair
    ct = interruptions(w, s.offer("ct"), 54 * 24)
    assert ct.recovery_hours == pytest.approx(ct.expected * 0.25)  # rescheduled in 15 minutes


def test_compare_json_carries_transfer_and_recovery(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from gpuplan.contracts.compare import CompareResult
    from gpuplan.render.compare import compare_json

    data = compare_json(_compare(tmp_path, ARTICLE.format(moves="once")).document("en"))
    CompareResult.model_validate(data)
    opts = {o["offer"]: o for o in data["workloads"][0]["options"]}
    assert opts["bm-remote"]["time"]["transfer_hours"] == pytest.approx(111.11, abs=0.01)
    assert opts["bm-remote"]["cost"]["transfer"] == pytest.approx(500.0)
    assert opts["ct-core"]["time"]["transfer_hours"] == 0
    assert opts["bm-remote"]["time"]["recovery_hours"] > opts["ct-core"]["time"]["recovery_hours"] > 0
