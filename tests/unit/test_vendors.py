"""The vendor checklist engine (issue 17): each check's pass / warn / fail / unknown, with its evidence."""

from __future__ import annotations

from pathlib import Path

import pytest
from _probe_fakes import bare_metal_tree, container_on_vm_tree, vm_tree

from gpuplan.contracts import validate
from gpuplan.contracts.probe_document import to_json
from gpuplan.contracts.vendors_document import vendors_json
from gpuplan.engines.vendors import (
    CHECK_IDS,
    MeasuredNetwork,
    VendorsResult,
    check_vendors,
    probe_network,
)
from gpuplan.inputs.catalog import load_catalog
from gpuplan.inputs.scenario import scenario_from_text
from gpuplan.inputs.scenario_types import Scenario
from gpuplan.probe import probe_node

CAT = load_catalog()
ROOT = Path(__file__).resolve().parents[2]

HEAD = """
version: 1
currency: CNY
sites: [{id: core}, {id: remote}, {id: far}]
links:
  - {from: core, to: remote, gbps: 1, cost_per_gb: 0.02}
  - {from: remote, to: far, gbps: 10}
"""


def scen(offers: str, workloads: str) -> Scenario:
    return scenario_from_text(f"{HEAD}offers:\n{offers}\nworkloads:\n{workloads}\n", "t.yaml", CAT)


def run(offers: str, workloads: str, measured: MeasuredNetwork | None = None) -> VendorsResult:
    return check_vendors(scen(offers, workloads), min_network_gbps=25.0, measured=measured)


def check(result: VendorsResult, offer: str, check_id: str, lang: str = "en") -> tuple[str, str]:
    doc = vendors_json(result, lang)
    validate("vendors", doc)
    o = next(o for o in doc["offers"] if o["offer"] == offer)
    c = next(c for c in o["checks"] if c["id"] == check_id)
    return c["status"], c["evidence"]


BM = "  - {{id: bm, gpu: h100-sxm, mode: bare-metal, price: {{amount: 2, per: gpu-hour}}{extra}}}"
W8 = "  - {id: w8, kind: training, gpu: h100-sxm, gpus: 8, hours_per_day: 24, duration: 60d}"
W16 = "  - {id: w16, kind: training, gpu: h100-sxm, gpus: 16, hours_per_day: 24, duration: 60d}"


def bm(extra: str = "") -> str:
    return BM.format(extra=", " + extra if extra else "")


# --- network-25g ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("net", "status", "words"), [
    ("network: {gbps: 100}", "pass", "100 Gb/s node network (at least 25 Gb/s)"),
    ("network: {gbps: 25}", "pass", "25 Gb/s node network"),
    ("network_gbps: 10", "fail", "10 Gb/s node network, below 25 Gb/s"),
    ("", "unknown", "does not state its node network"),
])
def test_network_from_the_offer(net: str, status: str, words: str) -> None:
    st, ev = check(run(bm(net), W8), "bm", "network-25g")
    assert (st, words in ev) == (status, True), ev


def test_a_measured_network_wins_over_the_offer() -> None:
    m = MeasuredNetwork("bm", 10.0, "eth0", "probe.json")
    st, ev = check(run(bm("network: {gbps: 100}"), W8, m), "bm", "network-25g")
    assert st == "fail" and "measured 10 Gb/s on eth0 (probe.json)" in ev and "the offer says 100 Gb/s" in ev
    st, ev = check(run(bm(), W8, MeasuredNetwork("bm", 200.0, "ens1f0", "p.json")), "bm", "network-25g")
    assert st == "pass" and "measured 200 Gb/s" in ev
    # a measurement of another offer leaves this one to its own figure
    st, _ = check(run(bm(), W8, MeasuredNetwork("other", 200.0, "x", "p.json")), "bm", "network-25g")
    assert st == "unknown"


def test_probe_network_reads_a_real_probe_document(tmp_path: Path) -> None:
    def doc(tree: object) -> dict[str, object]:
        return to_json(probe_node(tree, nvml=None))  # type: ignore[arg-type]

    # 25 GbE, 200 Gb RoCE and a 400 Gb InfiniBand port; the docker bridge is skipped
    assert probe_network(doc(bare_metal_tree(tmp_path / "bm"))) == (400.0, "mlx5_0/1")
    assert probe_network(doc(container_on_vm_tree(tmp_path / "ct"))) == (100.0, "eth0")
    assert probe_network(doc(vm_tree(tmp_path / "vm"))) is None  # virtio reports no speed
    with pytest.raises(ValueError, match="gpuplan.probe/1"):
        probe_network({"schema": "gpuplan.compare/1"})


# --- nvlink-roce ----------------------------------------------------------------------------------


def test_nvlink_and_rdma_pass() -> None:
    st, ev = check(run(bm("interconnect: nvlink, network: {gbps: 400, rdma: infiniband}"), W16), "bm",
                   "nvlink-roce")
    assert st == "pass"
    assert "NVLink inside the node; InfiniBand between nodes; spans nodes: w16" in ev


def test_a_multi_node_workload_without_rdma_fails() -> None:
    st, ev = check(run(bm("network: {gbps: 100, rdma: none}"), W8 + "\n" + W16), "bm", "nvlink-roce")
    assert st == "fail"
    assert "no RDMA between nodes" in ev and "spans nodes: w16" in ev and "fits one node of 8 GPUs: w8" in ev


def test_requires_multi_node_counts_as_spanning_nodes() -> None:
    w = "  - {id: w4, kind: training, gpu: h100-sxm, gpus: 4, hours_per_day: 24, duration: 60d, " \
        "requires: [multi-node]}"
    st, _ = check(run(bm("rdma: none"), w), "bm", "nvlink-roce")
    assert st == "fail"


def test_no_rdma_for_single_node_work_warns() -> None:
    st, ev = check(run(bm("rdma: none"), W8), "bm", "nvlink-roce")
    assert st == "warn" and "fits one node of 8 GPUs: w8" in ev


def test_pcie_only_with_rdma_warns() -> None:
    st, ev = check(run(bm("interconnect: pcie, rdma: roce"), W16), "bm", "nvlink-roce")
    assert st == "warn" and "PCIe only inside the node, no NVLink/HCCS" in ev and "RoCE between nodes" in ev


def test_rdma_unsaid_is_unknown_and_the_gpu_default_is_named() -> None:
    st, ev = check(run(bm(), W16), "bm", "nvlink-roce")
    assert st == "unknown"
    assert "NVLink inside the node (from the h100-sxm catalog entry; the offer does not say)" in ev
    assert "does not say whether it has RoCE/InfiniBand" in ev


def test_more_gpus_per_node_keep_work_on_one_node() -> None:
    st, ev = check(run(bm("gpus_per_node: 16, rdma: none"), W16), "bm", "nvlink-roce")
    assert st == "warn" and "fits one node of 16 GPUs: w16" in ev


# --- data-locality --------------------------------------------------------------------------------


def wd(size_gb: float, site: str = "core", moves: str = "once", duration: str = "60d", hours: int = 24,
       wid: str = "pre") -> str:
    return (f"  - {{id: {wid}, kind: training, gpu: h100-sxm, gpus: 8, hours_per_day: {hours}, duration: {duration},"
            f" data: {{size_gb: {size_gb}, site: {site}, moves: {moves}}}}}")


def test_data_at_the_offers_site_passes() -> None:
    st, ev = check(run(bm("site: core"), wd(50_000)), "bm", "data-locality")
    assert st == "pass" and ev == "pre: 50,000 GB already at core"


def test_the_articles_case_warns_with_hours_bandwidth_and_path() -> None:
    # 50 TB over 1 Gbit/s: 50,000 x 8 / 1 / 3600 = 111.1 h, 7.7% of 60 days (warn: 1% < share <= 10%)
    st, ev = check(run(bm("site: remote, network: {gbps: 100}"), wd(50_000)), "bm", "data-locality")
    assert st == "warn"
    assert "pre: 50,000 GB moved once over core → remote at 1 Gb/s: 111.1 h, 7.7% of its 60 d" in ev
    assert ", transfer 1,000 CNY" in ev  # 50,000 GB x 0.02 CNY/GB
    assert "warn above 1% of a run's duration, fail above 10%" in ev


def test_a_transfer_over_a_tenth_of_the_run_fails() -> None:
    # 111.1 h of a 20-day run is 23%
    st, ev = check(run(bm("site: remote"), wd(50_000, duration="20d")), "bm", "data-locality")
    assert st == "fail" and "23.1% of its 20 d" in ev


def test_a_short_transfer_passes_and_the_slower_of_route_and_node_network_counts() -> None:
    # remote -> far at 10 Gbit/s, but the offer's node has 5: 1,000 GB x 8 / 5 / 3600 = 0.44 h, 0.03%
    st, ev = check(run(bm("site: far, network: {gbps: 5}"), wd(1000, site="remote")), "bm", "data-locality")
    assert st == "pass" and "remote → far at 5 Gb/s: 0.4 h, 0.0% of its 60 d" in ev


def test_daily_moves_multiply_the_transfer() -> None:
    # 100 GB a day over 1 Gbit/s: 0.22 h x 60 days = 13.3 h, 0.9% of 60 days: pass; twice the data: warn
    st, ev = check(run(bm("site: remote"), wd(100, moves="daily")), "bm", "data-locality")
    assert st == "pass" and "moved daily (60x)" in ev and "13.3 h" in ev
    st, _ = check(run(bm("site: remote"), wd(200, moves="daily")), "bm", "data-locality")
    assert st == "warn"


def test_an_offer_without_a_site_is_unknown_and_remote_reads_pass() -> None:
    st, ev = check(run(bm(), wd(50_000)), "bm", "data-locality")
    assert st == "unknown" and "50,000 GB at core, but the offer names no site" in ev
    st, ev = check(run(bm("site: remote, remote_data: true"), wd(50_000)), "bm", "data-locality")
    assert st == "pass" and "in place (remote_data)" in ev


def test_the_worst_workload_decides_and_each_is_named() -> None:
    ws = wd(10, wid="small") + "\n" + wd(50_000, duration="20d", wid="big")
    st, ev = check(run(bm("site: remote"), ws), "bm", "data-locality")
    assert st == "fail" and ev.startswith("small: 10 GB moved once") and "big: 50,000 GB" in ev


def test_no_data_stated_passes_with_that_said() -> None:
    st, ev = check(run(bm("site: remote"), W8), "bm", "data-locality")
    assert st == "pass" and "says where its data is" in ev


def test_workloads_on_another_gpu_do_not_count() -> None:
    other = ("  - {id: a, gpu: a100-80g, mode: bare-metal, price: {amount: 2, per: gpu-hour}, site: remote}")
    r = run(bm("site: core") + "\n" + other, wd(50_000))
    st, ev = check(r, "a", "data-locality")
    assert st == "pass" and "no workload runs on a100-80g" in ev


# --- support-response -----------------------------------------------------------------------------


@pytest.mark.parametrize(("support", "status", "words"), [
    ("{response: 2h, coverage: 24x7}", "pass", "first response within 2 h, 24x7"),
    ("{response: 4h, coverage: 24x7}", "pass", "within 4 h"),
    ("{response: 8h, coverage: 24x7}", "warn", "slower than 4 h"),
    ("{response: 2h, coverage: business-hours}", "warn", "business hours only"),
    ("{response: 2h}", "warn", "coverage (24x7 or business hours) not stated"),
    ("{response: 24h, coverage: 24x7}", "warn", "slower than 4 h"),
    ("{response: 2d, coverage: 24x7}", "fail", "first response 48 h, over 24 h"),
    ("{coverage: 24x7}", "unknown", "coverage 24x7, but no response time"),
    (None, "unknown", "states no support response time"),
])
def test_support(support: str | None, status: str, words: str) -> None:
    st, ev = check(run(bm(f"support: {support}" if support else ""), W8), "bm", "support-response")
    assert (st, words in ev) == (status, True), ev


def test_support_evidence_names_spares_and_elastic_recovery() -> None:
    _, ev = check(run(bm("spares: 1, support: {response: 8h, coverage: 24x7}"), W8), "bm", "support-response")
    assert "1 leased spare node(s) take over in minutes" in ev
    ct = "  - {id: ct, gpu: h100-sxm, mode: container, price: {amount: 3, per: gpu-hour}}"
    _, ev = check(run(ct, W8), "ct", "support-response")
    assert "a failed container or hourly VM is replaced" in ev


# --- providers and the document -------------------------------------------------------------------


def test_provider_summaries_count_and_name_what_did_not_pass() -> None:
    offers = "\n".join([
        bm("provider: acme, network: {gbps: 10, rdma: roce}, support: {response: 1h, coverage: 24x7}"),
        "  - {id: bm2, provider: acme, gpu: h100-sxm, mode: bare-metal, price: {amount: 2, per: gpu-hour}}",
        "  - {id: ct, gpu: h100-sxm, mode: container, price: {amount: 3, per: gpu-hour}, network: {gbps: 100}}",
    ])
    doc = vendors_json(run(offers, W8))
    validate("vendors", doc)
    acme, none = doc["providers"]
    assert acme["provider"] == "acme" and acme["offers"] == ["bm", "bm2"]
    assert acme["counts"] == {"pass": 4, "warn": 0, "fail": 1, "unknown": 3}
    assert acme["summary"].startswith("bm, bm2: 4 pass, 0 warn, 1 fail, 3 unknown — fail: bm network-25g; unknown:")
    assert none["provider"] is None and none["offers"] == ["ct"]
    assert sum(none["counts"].values()) == len(CHECK_IDS)


def test_a_provider_whose_checks_all_pass() -> None:
    offers = bm("provider: acme, interconnect: nvlink, network: {gbps: 100, rdma: roce}, "
                "support: {response: 1h, coverage: 24x7}")
    doc = vendors_json(run(offers, W16))
    assert doc["providers"][0]["summary"] == "bm: all 4 checks pass"


def test_chinese_evidence() -> None:
    st, ev = check(run(bm("site: remote"), wd(50_000)), "bm", "data-locality", "zh")
    assert st == "warn" and "111.1 小时" in ev and "7.7%" in ev and "core → remote" in ev


@pytest.mark.parametrize("example", sorted((ROOT / "examples").glob("*.yaml")), ids=lambda p: p.stem)
def test_every_bundled_example_gives_every_check_a_status_with_evidence(example: Path) -> None:
    from gpuplan.inputs.scenario import load_scenario

    res = check_vendors(load_scenario(example, CAT), min_network_gbps=25.0)
    for lang in ("en", "zh"):
        doc = vendors_json(res, lang)
        validate("vendors", doc)
        for o in doc["offers"]:
            assert [c["id"] for c in o["checks"]] == list(CHECK_IDS)
            assert all(c["status"] in ("pass", "warn", "fail", "unknown") and c["evidence"].strip()
                       for c in o["checks"])
        assert {p["provider"] for p in doc["providers"]} == {o["provider"] for o in doc["offers"]}


def test_a_measured_network_also_sets_the_transfer_bandwidth() -> None:
    # the link remote -> far carries 10 Gbit/s; the probe saw 2 on the node: 10,000 GB x 8 / 2 / 3600 = 11.1 h
    offers = bm("site: far, network: {gbps: 100}")
    st, ev = check(run(offers, wd(10_000, site="remote")), "bm", "data-locality")
    assert st == "pass" and "at 10 Gb/s: 2.2 h" in ev
    st, ev = check(run(offers, wd(10_000, site="remote"), MeasuredNetwork("bm", 2.0, "eth0", "p.json")), "bm",
                   "data-locality")
    assert st == "pass" and "at 2 Gb/s: 11.1 h" in ev
