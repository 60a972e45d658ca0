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
    # 64 GPUs on 8 nodes. The reference: the full fabric, 8 x 400 Gbit/s InfiniBand x 0.92 link
    # efficiency = 368 GB/s, below NVLink's 450, so the reference ring is bound by the network. No network
    # given: a common cluster's 8 x 200 Gbit/s is assumed (184 GB/s), the range reaching the full fabric.
    c = 0.3
    assert sd.comm.bus_ref_gbs == pytest.approx(3200 / 8 * 0.92)
    assert sd.comm.b_net_gbs == pytest.approx(1600 / 8 * 0.92) and sd.comm.network_assumed
    strag = 0.10 + 0.05 * 64 / 65
    assert sd.terms.compute == pytest.approx((1 - c) * 0.02)
    # NVLink at 0.8 x 450 = 360 GB/s binds a little first (368 -> 360), then the network at 0.8 x 184
    assert sd.terms.intra_node == pytest.approx(c * (368 / 360 - 1))
    assert sd.terms.inter_node == pytest.approx(c * (368 / (0.8 * 184) - 368 / 360))
    assert sd.comm.binding == "network"
    assert sd.terms.straggler == pytest.approx(strag)
    assert sd.total == pytest.approx(1 + (1 - c) * 0.02 + c * (368 / 147.2 - 1) + strag)
    assert sd.multi_node and sd.comm.nodes == 8
    # at the full fabric (the range's low end) only the flat 0.8 shows: c (1/0.8 - 1)
    assert sd.low == pytest.approx(1 + (1 - c) * 0.02 + c * 0.25 + strag)
    assert sd.high == pytest.approx(sd.total)
    # Bare metal with no network stated: the assumed 200 Gbit/s a GPU is half the reference fabric,
    # so the communication share takes twice as long; the full fabric (its range's low end) is 1.0
    bm = slowdown(w, s.offer("bm"), CAT)
    assert bm.total == pytest.approx(1 + c * (368 / 184 - 1)) and bm.low == pytest.approx(1.0)
    assert "400 Gbit/s InfiniBand RDMA per GPU" in sd.reference


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
    assert busy.platform > 1.1  # a shared host: NVLink loss and the article's fluctuation
    k = 4.0  # catalog data_sharpness
    # 60% of the time waiting on data hides a ~1.2x platform slowdown almost entirely
    assert starved.bound == "data" and starved.data_wait == pytest.approx(0.6)
    g = 0.4
    assert starved.total == pytest.approx(((g * starved.platform) ** k + 1 - g**k) ** (1 / k))
    assert 1.0 < starved.total < 1.01
    assert starved.terms.data == pytest.approx(starved.total - starved.platform)
    # a stated wait of 10% hides about 10% of it, smoothly: between the hard max and the platform
    g = 0.9
    assert stated.total == pytest.approx(((g * stated.platform) ** k + 1 - g**k) ** (1 / k))
    assert max(1.0, 0.9 * stated.platform) <= stated.total < stated.platform


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


def _exposed(t: float, pc: float) -> float:
    """t - the harmonic smooth minimum of t and pC (catalog overlap_sharpness 1), by hand."""
    return t if pc == 0 else t - t * pc / (t + pc)


def test_step_model_communication_from_first_principles() -> None:
    s = scenario_from_text(STEP)
    heavy, light = s.workloads
    b_net = 100 / 8 * 0.92  # the offer's ring: 100 Gbit/s, far below NVLink
    b_ref = min(900 / 2, 3200 / 8 * 0.92)  # the reference: H100 NVLink, 8 x 400 Gbit/s InfiniBand
    ring = 2 * 63 / 64 * 1.1
    t_ref, t = ring / b_ref, ring / b_net
    rdma = slowdown(heavy, s.offer("bm-rdma"), CAT)
    assert rdma.comm.comm_s == pytest.approx(t_ref)
    step_ref = 0.2 + _exposed(t_ref, 0.5 * 0.2)
    assert rdma.comm.step_s == pytest.approx(step_ref)
    # bare metal on 100 Gbit/s RoCE is slower than the full fabric: its own network counts
    assert rdma.total == pytest.approx((0.2 + _exposed(t, 0.1)) / step_ref)
    assert rdma.total > 1.5 and rdma.terms.inter_node == pytest.approx(rdma.total - 1)
    # the same TCP-versus-RDMA change costs a communication-heavy job far more than a light one
    tcp = slowdown(heavy, s.offer("bm-tcp"), CAT)
    h_tcp = tcp.total / rdma.total - 1
    assert h_tcp == pytest.approx((0.2 + _exposed(t / 0.6, 0.1)) / (0.2 + _exposed(t, 0.1)) - 1)
    l_rdma, l_tcp_sd = (slowdown(light, s.offer(o), CAT) for o in ("bm-rdma", "bm-tcp"))
    l_tcp = l_tcp_sd.total / l_rdma.total - 1
    assert h_tcp > 2 * l_tcp > 0
    tl = 2 * 63 / 64 * 0.1 / b_net
    assert l_tcp == pytest.approx((0.5 + tl / 0.6) / (0.5 + tl) - 1)
