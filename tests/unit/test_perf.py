import pytest

from gpuplan.inputs.catalog import load_catalog
from gpuplan.inputs.scenario import scenario_from_text
from gpuplan.models.perf import expected_max_uniform, slowdown

CAT = load_catalog()


def test_expected_max_uniform() -> None:
    assert expected_max_uniform(0.1, 0.15, 1) == pytest.approx(0.125)  # one worker: the mean
    assert expected_max_uniform(0.1, 0.15, 64) == pytest.approx(0.1 + 0.05 * 64 / 65)
    assert expected_max_uniform(0.2, 0.2, 10) == pytest.approx(0.2)
    with pytest.raises(ValueError):
        expected_max_uniform(0.1, 0.2, 0)


def test_straggler_grows_with_workers() -> None:
    values = [expected_max_uniform(0.1, 0.15, n) for n in (1, 2, 8, 64, 1024)]
    assert values == sorted(values) and values[-1] < 0.15


SCEN = """
version: 1
currency: USD
offers:
  - {id: ct, gpu: h100-sxm, mode: container, price: {amount: 4, per: gpu-hour},
     overhead: {compute: 0.02, interconnect: 0.8, jitter: [0.10, 0.15]}}
  - {id: ct-tcp, gpu: h100-sxm, mode: container, price: {amount: 4, per: gpu-hour}, rdma: none,
     overhead: {compute: 0.02, interconnect: 0.8, jitter: [0.10, 0.15]}}
  - {id: bm, gpu: h100-sxm, mode: bare-metal, price: {amount: 2, per: gpu-hour}}
workloads:
  - {id: big, kind: training, gpu: h100-sxm, gpus: 64, hours_per_day: 24, duration: 90d, communication: 0.3,
     requires: [multi-node]}
"""


def test_slowdown_formula_h100_multinode() -> None:
    s = scenario_from_text(SCEN)
    w = s.workloads[0]
    sd = slowdown(w, s.offer("ct"), CAT)
    comm = 0.3 * (1 / 0.8 - 1)
    strag = 0.10 + 0.05 * 64 / 65
    assert sd.total == pytest.approx(1 + 0.02 + comm + strag)
    assert sd.total >= 1.10
    assert sd.multi_node
    # Bare metal is the reference: no slowdown with catalog defaults.
    assert slowdown(w, s.offer("bm"), CAT).total == pytest.approx(1.0)


def test_tcp_penalty_only_without_rdma_across_nodes() -> None:
    s = scenario_from_text(SCEN)
    w = s.workloads[0]
    with_tcp = slowdown(w, s.offer("ct-tcp"), CAT)
    assert with_tcp.interconnect_effective == pytest.approx(0.8 * 0.6)
    assert with_tcp.total > slowdown(w, s.offer("ct"), CAT).total
