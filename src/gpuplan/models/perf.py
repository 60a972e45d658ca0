"""Performance of one workload on one offer, against dedicated bare metal with the same GPUs.

A step on dedicated bare metal takes T_ref; on the offer, each term adds a fraction of T_ref:

    slowdown = 1 + compute + intra_node + inter_node + straggler + data

- compute    = compute share x compute overhead (`overhead.compute`, mid of its range).
- intra_node = extra time of the all-reduce's NVLink/HCCS phase at `overhead.intra_node` of the bandwidth.
- inter_node = extra time of its network phase at `overhead.inter_node` of the bandwidth, times the TCP
               efficiency (catalog, 0.6: NVIDIA/nccl issue 209) where the offer says `rdma: none`.
               0 for a job on one node.
- straggler  = E[max of n per-worker jitter draws]: a synchronous job waits for its slowest worker.
               uniform [lo, hi]: lo + (hi - lo) n / (n + 1); {median m, p99 q}: an exponential tail
               through both, a + theta H_n with theta = (q - m) / ln 50, a = m - theta ln 2 (>= 0).
- data       = <= 0: the part of the platform's slowdown hidden behind input waits. An input-bound
               workload (utilisation below the catalog's 70% threshold, or a stated `data_wait`) waits
               on data for d = 1 - utilisation (or data_wait) of the time; with an overlapping input
               pipeline a platform slowdown s costs time only beyond that slack:
               effective = max(1, (1 - d) x s), data = effective - s.

Communication, the standard ring all-reduce cost (nccl-tests PERFORMANCE.md): for S bytes over n GPUs
    t = 2 (n - 1) / n x S / B,   B = the bus bandwidth of the slowest link of the ring:
    one node: B = B_intra;  several: B = min(B_intra, B_net)  (NCCL's rings cross the network once per
    node, so nccl-tests' multi-node busbw is about the node's network bandwidth)
with B_intra = gpu_gpu_gbs / 2 (the catalog's bidirectional NVLink/HCCS GB/s) and
B_net = network Gbit/s / 8 x link efficiency (catalog). On the offer, B_intra x intra_node and
B_net x inter_node (x TCP efficiency). Two ways to use it:
- with `step: {compute_s C, gradient_gb S, overlap p}`: exposed = max(0, t - p x C), so the
  communication share grows with slower links by itself; T_ref = C + exposed_ref;
- without it: the workload's `communication` share c of T_ref (non-overlapped, on dedicated
  hardware), scaled by B_ref / B_offer; c is 0 for a one-GPU job.
Either way the terms are the increments of T as the compute overhead, then the intra-node, then the
inter-node bandwidth loss are applied in turn, so they add up to the total exactly. A flat
`interconnect: i` (both fractions i) gives c (1/i - 1), as in the first model.

Across GPU types (`gpu: [a, b]`), the work takes `gpu_speed_factor` = time on this GPU over time on
the workload's first GPU: the user's `speed:` where given, else a roofline by kind (training,
fine-tuning, experiments: dense BF16 throughput at the same utilisation; inference: the geometric mean
of the BF16 and memory-bandwidth ratios). Utilisation does not change a step's speed: it changes how
much of the paid time does work (see `engines.cost`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from gpuplan.inputs.catalog import Catalog
from gpuplan.inputs.scenario_types import Jitter, Offer, Workload


@dataclass(frozen=True)
class Terms:
    """Each term's added time, a fraction of the dedicated step time (see the module docstring)."""

    compute: float
    intra_node: float
    inter_node: float
    straggler: float
    data: float


@dataclass(frozen=True)
class CommInputs:
    """What the communication terms were computed from (for `--explain`)."""

    model: str  # "step" (first principles) | "share" (the workload's communication share) | "none"
    share: float  # exposed communication share of the dedicated step
    binding: str  # the ring's slowest link on dedicated hardware: "nvlink" | "network"
    bus_ref_gbs: float  # the all-reduce bus bandwidth on dedicated hardware
    bus_offer_gbs: float  # ... and on this offer
    intra_fraction: float
    inter_fraction: float  # after the TCP efficiency, where it applies
    tcp: bool
    tcp_efficiency: float  # applied to inter_fraction where tcp (1.0 otherwise)
    nodes: int
    gpus_per_node: int
    b_intra_gbs: float
    b_net_gbs: float
    network_assumed: bool  # the offer gave no network; the catalog's reference network was used
    comm_s: float = 0.0  # step mode: all-reduce seconds on dedicated hardware
    step_s: float = 0.0  # step mode: T_ref in seconds


@dataclass(frozen=True)
class Slowdown:
    total: float  # wall time on this offer over dedicated bare metal with the same GPU (mid of ranges)
    terms: Terms
    platform: float  # 1 + compute + intra_node + inter_node + straggler (before input waits)
    bound: str  # compute | communication | data
    data_wait: float  # d: the share of time the GPUs wait on input (0 when not input-bound)
    comm: CommInputs
    gpu_speed_factor: float
    speed_source: str  # same-gpu | measured | roofline:bf16 | roofline:inference
    multi_node: bool

    # The names of the first model, still read by the verdict's reasons.
    @property
    def compute(self) -> float:
        return self.terms.compute

    @property
    def interconnect(self) -> float:
        return self.terms.intra_node + self.terms.inter_node

    @property
    def straggler(self) -> float:
        return self.terms.straggler


def expected_max_uniform(lo: float, hi: float, n: int) -> float:
    """E[max of n independent draws from U(lo, hi)] = lo + (hi - lo) * n / (n + 1)."""
    if n < 1:
        raise ValueError("n must be >= 1")
    return lo + (hi - lo) * n / (n + 1)


@lru_cache(maxsize=1024)  # every option of every workload of n GPUs asks again
def harmonic(n: int) -> float:
    """H_n = 1 + 1/2 + ... + 1/n (exact to 64, then the asymptotic series, error < 1e-9)."""
    if n <= 64:
        return math.fsum(1.0 / k for k in range(1, n + 1))
    return math.log(n) + 0.5772156649015329 + 1 / (2 * n) - 1 / (12 * n * n)


def expected_max_jitter(j: Jitter, n: int) -> float:
    """E[max of n per-worker jitter draws] (module docstring); never below 0."""
    if n < 1:
        raise ValueError("n must be >= 1")
    if j.kind == "uniform":
        return expected_max_uniform(j.low, j.high, n)
    theta = (j.high - j.low) / math.log(50.0)
    a = j.low - theta * math.log(2.0)
    return max(0.0, a + theta * harmonic(n))


def is_multi_node(workload: Workload, offer: Offer) -> bool:
    return "multi-node" in workload.requires or workload.gpus > offer.gpus_per_node


def layout(workload: Workload, offer: Offer) -> tuple[int, int]:
    """(nodes, GPUs per node) the job spreads over: whole nodes first; `multi-node` forces >= 2."""
    n, gpn = workload.gpus, offer.gpus_per_node
    nodes = -(-n // gpn)
    if "multi-node" in workload.requires and nodes < 2 and n >= 2:
        nodes = 2
    return nodes, -(-n // nodes)


def _bandwidths(offer: Offer, catalog: Catalog) -> tuple[float, float, bool]:
    spec = catalog.gpus.get(offer.gpu)
    b_intra = max(spec.gpu_gpu_gbs if spec else 0.0, 32.0) / 2  # PCIe Gen4 x16 as the floor
    eff = float(catalog.defaults["link_efficiency"])
    if offer.network_gbps is not None:
        return b_intra, offer.network_gbps / 8 * eff, False
    gbps = float(catalog.defaults["reference_network_gbps_per_gpu"]) * offer.gpus_per_node
    return b_intra, gbps / 8 * eff, True


def gpu_speed(workload: Workload, gpu: str, catalog: Catalog) -> tuple[float, str]:
    """(time on `gpu` over time on the workload's first GPU, where the figure came from)."""
    ref = workload.gpus_allowed[0]
    if gpu == ref:
        return 1.0, "same-gpu"
    measured = dict(workload.speed)
    if gpu in measured:
        return measured.get(ref, 1.0) / measured[gpu], "measured"
    if ref not in catalog.gpus or gpu not in catalog.gpus:
        return 1.0, "unknown"
    a, b = catalog.gpus[ref], catalog.gpus[gpu]
    ratio = b.bf16_tflops / a.bf16_tflops
    if workload.kind == "inference":
        return 1.0 / math.sqrt(ratio * (b.hbm_tbs / a.hbm_tbs)), "roofline:inference"
    return 1.0 / ratio, "roofline:bf16"


def slowdown(workload: Workload, offer: Offer, catalog: Catalog) -> Slowdown:
    """The slowdown and its terms (module docstring), at the middle of every overhead range."""
    ov = offer.overhead
    n = workload.gpus
    nodes, g = layout(workload, offer)
    multi = nodes > 1
    oc, fi, fe = ov.compute.mid, ov.intra_node.mid, ov.inter_node.mid
    tcp = multi and offer.rdma == "none"
    tcp_eff = float(catalog.defaults["tcp_efficiency"]) if tcp else 1.0
    fe *= tcp_eff
    b_intra, b_net, assumed = _bandwidths(offer, catalog)
    if multi:
        bus_ref = min(b_intra, b_net)
        bus1 = min(b_intra * fi, b_net)  # after the intra-node loss
        bus2 = min(b_intra * fi, b_net * fe)  # after the inter-node loss too
    else:
        bus_ref = b_intra
        bus1 = bus2 = b_intra * fi
    binding = "network" if multi and b_net < b_intra else "nvlink"

    comm_s = step_s = 0.0
    if workload.step is not None and n > 1:
        st = workload.step
        c, p = st.compute_s, st.overlap
        ring = 2 * (n - 1) / n * st.gradient_gb  # GB each GPU moves per all-reduce

        def step(compute: float, bus: float) -> float:
            return compute + max(0.0, ring / bus - p * compute)

        comm_s = ring / bus_ref
        t_ref = step(c, bus_ref)
        t1 = step(c * (1 + oc), bus_ref)
        t2 = step(c * (1 + oc), bus1)
        t3 = step(c * (1 + oc), bus2)
        step_s = t_ref
        compute_t, intra_t, inter_t = (t1 - t_ref) / t_ref, (t2 - t1) / t_ref, (t3 - t2) / t_ref
        share = (t_ref - c) / t_ref
        exposed_offer = (t3 - c * (1 + oc)) / t_ref
        model = "step"
    else:
        share = workload.communication if n > 1 else 0.0
        compute_t = (1 - share) * oc
        intra_t = share * (bus_ref / bus1 - 1)
        inter_t = share * (bus_ref / bus2 - bus_ref / bus1)
        exposed_offer = share * bus_ref / bus2
        model = "share" if n > 1 else "none"
    straggler = expected_max_jitter(ov.jitter, n)
    platform = 1 + compute_t + intra_t + inter_t + straggler

    threshold = float(catalog.defaults["utilization_threshold"])
    if workload.data_wait is not None:
        d = workload.data_wait
    else:
        d = 1 - workload.utilization if workload.utilization < threshold else 0.0
    total = max(1.0, (1 - d) * platform) if d > 0 else platform
    compute_offer = (1 - share) * (1 + oc) if model != "step" else (platform - straggler - exposed_offer)
    if d > 0:
        bound = "data"
    elif exposed_offer >= compute_offer:
        bound = "communication"
    else:
        bound = "compute"
    speed, source = gpu_speed(workload, offer.gpu, catalog)
    return Slowdown(
        total=total,
        terms=Terms(compute=compute_t, intra_node=intra_t, inter_node=inter_t, straggler=straggler,
                    data=total - platform),
        platform=platform,
        bound=bound,
        data_wait=d,
        comm=CommInputs(model=model, share=share, binding=binding, bus_ref_gbs=bus_ref, bus_offer_gbs=bus2,
                        intra_fraction=fi, inter_fraction=fe,
                        tcp=tcp, tcp_efficiency=tcp_eff, nodes=nodes, gpus_per_node=g, b_intra_gbs=b_intra,
                        b_net_gbs=b_net,
                        network_assumed=assumed and multi, comm_s=comm_s, step_s=step_s),
        gpu_speed_factor=speed,
        speed_source=source,
        multi_node=multi,
    )
