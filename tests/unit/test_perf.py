import dataclasses
import math

import pytest

from gpuplan.inputs.catalog import load_catalog
from gpuplan.inputs.scenario import scenario_from_text
from gpuplan.inputs.scenario_types import Jitter
from gpuplan.models.perf import expected_max_jitter, expected_max_uniform, harmonic, slowdown

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
    # 64 GPUs on 8 nodes; no network given: 8 x 200 Gbit/s assumed, x 0.92 link efficiency: the ring is
    # bound by the network (184 GB/s < NVLink's 450), so only the inter-node loss shows
    c = 0.3
    assert sd.comm.binding == "network" and sd.comm.bus_ref_gbs == pytest.approx(1600 / 8 * 0.92)
    strag = 0.10 + 0.05 * 64 / 65
    assert sd.terms.compute == pytest.approx((1 - c) * 0.02)
    assert sd.terms.intra_node == 0.0
    assert sd.terms.inter_node == pytest.approx(c * (1 / 0.8 - 1))  # the flat form: c (1/i - 1)
    assert sd.terms.straggler == pytest.approx(strag)
    assert sd.total == pytest.approx(1 + (1 - c) * 0.02 + c * 0.25 + strag)
    assert sd.total >= 1.10
    assert sd.multi_node and sd.comm.nodes == 8 and sd.comm.network_assumed
    # Bare metal is the reference: no slowdown with catalog defaults.
    assert slowdown(w, s.offer("bm"), CAT).total == pytest.approx(1.0)


def test_tcp_penalty_only_without_rdma_across_nodes() -> None:
    s = scenario_from_text(SCEN)
    w = s.workloads[0]
    with_tcp = slowdown(w, s.offer("ct-tcp"), CAT)
    plain = slowdown(w, s.offer("ct"), CAT)
    assert with_tcp.comm.tcp and with_tcp.comm.inter_fraction == pytest.approx(0.8 * 0.6)
    assert with_tcp.terms.intra_node == pytest.approx(plain.terms.intra_node)  # NVLink is not TCP
    assert with_tcp.terms.inter_node > plain.terms.inter_node
    # one node: no network term at all, TCP or not
    one = dataclasses.replace(w, gpus=8, requires=frozenset())
    single = slowdown(one, s.offer("ct-tcp"), CAT)
    assert single.terms.inter_node == 0.0 and not single.comm.tcp and not single.multi_node


def test_terms_add_up_and_single_gpu_has_no_communication() -> None:
    s = scenario_from_text(SCEN)
    w = s.workloads[0]
    for o in s.offers:
        sd = slowdown(w, o, CAT)
        tm = sd.terms
        assert 1 + tm.compute + tm.intra_node + tm.inter_node + tm.straggler + tm.data == pytest.approx(sd.total)
    one = dataclasses.replace(w, gpus=1, requires=frozenset())
    sd = slowdown(one, s.offer("ct"), CAT)
    assert sd.comm.model == "none" and sd.terms.intra_node == 0 and sd.terms.inter_node == 0
    assert sd.terms.compute == pytest.approx(0.02)


def test_tail_jitter_expected_max() -> None:
    j = Jitter("tail", 0.0, 0.0)
    assert expected_max_jitter(j, 10_000) == 0.0
    j = Jitter("tail", 0.01, 0.05)
    theta = 0.04 / math.log(50)
    a = 0.01 - theta * math.log(2)
    assert expected_max_jitter(j, 1) == pytest.approx(a + theta)  # one worker: the mean
    assert expected_max_jitter(j, 1000) == pytest.approx(a + theta * sum(1 / k for k in range(1, 1001)), rel=1e-9)
    vals = [expected_max_jitter(j, n) for n in (1, 8, 64, 1024, 16384)]
    assert vals == sorted(vals)


def test_harmonic_series() -> None:
    for n in (1, 2, 64, 65, 100, 5000):
        assert harmonic(n) == pytest.approx(math.fsum(1 / k for k in range(1, n + 1)), rel=1e-9)


DATA = """
version: 1
currency: USD
offers:
  - {id: ct, gpu: h100-sxm, mode: container, price: {amount: 4, per: gpu-hour}}
workloads:
  - {id: starved, kind: training, gpu: h100-sxm, gpus: 8, hours_per_day: 8, duration: 30d, utilization: 0.4}
  - {id: busy, kind: training, gpu: h100-sxm, gpus: 8, hours_per_day: 8, duration: 30d, utilization: 0.9}
  - {id: stated, kind: training, gpu: h100-sxm, gpus: 8, hours_per_day: 8, duration: 30d, utilization: 0.9,
     data_wait: 0.1}
"""


def test_data_stalls_hide_the_platform_slowdown() -> None:
    s = scenario_from_text(DATA)
    ct = s.offer("ct")
    starved, busy, stated = (slowdown(w, ct, CAT) for w in s.workloads)
    assert busy.bound != "data" and busy.terms.data == 0 and busy.total == pytest.approx(busy.platform)
    assert busy.platform > 1.1  # a shared host: the article's jitter
    # 60% of the time waiting on data hides a ~1.2x platform slowdown entirely
    assert starved.bound == "data" and starved.data_wait == pytest.approx(0.6)
    assert starved.total == pytest.approx(max(1.0, 0.4 * starved.platform)) == 1.0
    assert starved.terms.data == pytest.approx(1.0 - starved.platform)
    # a stated wait of 10% hides only 10% of it
    assert stated.bound == "data" and stated.total == pytest.approx(0.9 * stated.platform)


STEP = """
version: 1
currency: USD
offers:
  - {id: bm-rdma, gpu: h100-sxm, mode: bare-metal, price: {amount: 2, per: gpu-hour},
     network: {gbps: 100, rdma: roce}}
  - {id: bm-tcp, gpu: h100-sxm, mode: bare-metal, price: {amount: 2, per: gpu-hour},
     network: {gbps: 100, rdma: none}}
workloads:
  - {id: heavy, kind: training, gpu: h100-sxm, gpus: 64, hours_per_day: 24, duration: 30d,
     step: {compute_s: 0.2, gradient_gb: 1.1, overlap: 0.5}}
  - {id: light, kind: training, gpu: h100-sxm, gpus: 64, hours_per_day: 24, duration: 30d,
     step: {compute_s: 0.5, gradient_gb: 0.1, overlap: 0.0}}
"""


def test_step_model_communication_from_first_principles() -> None:
    s = scenario_from_text(STEP)
    heavy, light = s.workloads
    b_net = 100 / 8 * 0.92  # the ring's slowest link: 100 Gbit/s, far below NVLink
    t = 2 * 63 / 64 * 1.1 / b_net
    ref = slowdown(heavy, s.offer("bm-rdma"), CAT)
    assert ref.total == pytest.approx(1.0)
    assert ref.comm.comm_s == pytest.approx(t)
    assert ref.comm.step_s == pytest.approx(0.2 + max(0.0, t - 0.5 * 0.2))
    # the same TCP-versus-RDMA change costs a communication-heavy job far more than a light one
    h_tcp = slowdown(heavy, s.offer("bm-tcp"), CAT).total - 1
    l_tcp = slowdown(light, s.offer("bm-tcp"), CAT).total - 1
    assert h_tcp > 5 * l_tcp > 0
    tl = 2 * 63 / 64 * 0.1 / b_net
    ref_l = 0.5 + tl
    tl_tcp = tl / 0.6
    assert l_tcp == pytest.approx((0.5 + tl_tcp) / ref_l - 1)
