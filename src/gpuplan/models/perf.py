"""Time of one workload on one offer: the offer's own GPU, links and network, against a stated reference.

The reference is the workload on the offer's GPU on *ideal dedicated bare metal with a full fabric*:
the GPU's own NVLink/HCCS (or PCIe) inside a node and, between nodes, `reference_fabric_gbps_per_gpu`
(catalog: 400 Gbit/s of InfiniBand RDMA per GPU, as in an 8x400G H100 node). Every offer -- bare
metal included -- is measured against that, so a slow network costs time on every platform. A step
on the reference takes T_ref; on the offer each term adds a fraction of T_ref:

    slowdown = 1 + compute + intra_node + inter_node + straggler + data

- compute    = compute share x compute overhead (`overhead.compute`, mid of its range).
- intra_node = extra time of the all-reduce's NVLink/HCCS phase at `overhead.intra_node` of the bandwidth.
- inter_node = extra time of its network phase on the offer's own network (its Gbit/s, RDMA or TCP) at
               `overhead.inter_node` of that bandwidth, against the reference fabric; the TCP efficiency
               (catalog, 0.6: NVIDIA/nccl issue 209) applies where the offer says `rdma: none`.
               0 for a job on one node.
- straggler  = fluctuation: each step each worker is slowed by a random draw from its neighbours; one
               GPU pays the mean, a synchronous job of n GPUs the expected maximum of n draws.
               uniform [lo, hi]: lo + (hi - lo) n / (n + 1) (n = 1: the mean); {median m, p99 q}: an
               exponential tail through both, a + theta H_n with theta = (q - m) / ln 50,
               a = m - theta ln 2 (>= 0; n = 1: the mean a + theta).
- data       = the part of the platform's slowdown hidden behind input waits (<= 0 where the platform
               is slower). The GPUs wait on data for d of the reference time: a stated `data_wait`, else
               d = (1 - utilisation) x S(u), S a smoothstep from 1 at utilisation 0.6 to 0 at 0.8 (the
               seed article's 70% threshold, blurred over +-10 points so no point of utilisation jumps).
               GPU work (1 - d) and the input pipeline overlap; a step is their smooth maximum
               (a p-norm, exponent k = `data_sharpness`), normalised so the reference step is 1:
                   total = ( ((1 - d) s)^k + 1 - (1 - d)^k )^(1/k),   s = the platform's slowdown
               (d = 0: total = s; k -> infinity: max(1, (1 - d) s), the first model).

Communication, the standard ring all-reduce cost (nccl-tests PERFORMANCE.md): for S bytes over n GPUs
    t = 2 (n - 1) / n x S / B,   B = the bus bandwidth of the slowest link of the ring:
    one node: B = B_intra;  several: B = min(B_intra, B_net)  (NCCL's rings cross the network once per
    node, so nccl-tests' multi-node busbw is about the node's network bandwidth)
with B_intra = gpu_gpu_gbs / 2 (the catalog's bidirectional NVLink/HCCS GB/s, PCIe Gen4 x16 at least)
and B_net = network Gbit/s / 8 x link efficiency (catalog). Reference: B_net_ref from the full fabric
(reference_fabric_gbps_per_gpu x the job's GPUs per node). Offer: the node's Gbit/s in proportion to
the job's GPUs on it (one NIC a GPU, as GPU nodes are built). Then B_intra x intra_node and B_net_offer x
inter_node (x TCP efficiency); an offer that states no network is taken to have a common cluster's
200 Gbit/s RDMA per GPU (`reference_network_gbps_per_gpu`, an estimate; a warning says so), its slowdown
range reaching down to the full fabric. Two ways to use it:
- with `step: {compute_s C, gradient_gb S, overlap p}`: the part of t hidden behind compute is a smooth
  minimum of t and p C,  hidden = (t^-k + (p C)^-k)^(-1/k)  (k = `overlap_sharpness`; 0 when p C = 0),
  exposed = t - hidden: a smooth function of overlap and bandwidth (no `max(0, t - p C)` corner);
  T_ref = C + exposed_ref;
- without it: the workload's `communication` share c of T_ref (non-overlapped, on the reference), scaled
  by B_ref / B_offer; c is 0 for a one-GPU job.
Either way the terms are the increments of T as the compute overhead, then the intra-node, then the
inter-node bandwidth (and the offer's own network) are applied in turn, so they add up exactly.

Across GPU types (`gpu: [a, b]`), the work takes `gpu_speed_factor` = time on this GPU over time on
the workload's first GPU: the user's `speed:` where given, else a published benchmark ratio from the
catalog (`gpu_speed:` in defaults.yaml, each with its source), else a roofline by kind (training,
fine-tuning, experiments: dense BF16 throughput; inference: the geometric mean of the BF16 and
memory-bandwidth ratios). Run hours on an offer = dedicated hours x slowdown x gpu_speed_factor.

GPU sharing: work of a fraction of a card (`gpus: 0.5`) on an offer with `sharing: mig | mps |
time-slicing` adds the mode's interference (catalog `sharing`: MIG 0, isolated; MPS +8%, time-slicing
+30%, each sourced) to the compute overhead; `card_slice` gives the fraction billed and its memory.

A service (`service:`) steps as one replica: its replicas are independent, so communication and the
straggler term take one replica's GPUs, not the whole fleet's.

Ranges (`slowdown_range`): the slowdown at the favourable and the unfavourable corner of every overhead
range (compute low/high, bandwidth fractions high/low) and, for an offer whose tenancy is unknown
(`Offer.overhead_alt`: the dedicated figures), at both tenancies.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import lru_cache

from gpuplan.inputs.catalog import Catalog
from gpuplan.inputs.scenario_types import Jitter, Offer, Overhead, Workload


@dataclass(frozen=True)
class Terms:
    """Each term's added time, a fraction of the reference step time (see the module docstring)."""

    compute: float
    intra_node: float
    inter_node: float
    straggler: float
    data: float


@dataclass(frozen=True)
class CommInputs:
    """What the communication terms were computed from (for `--explain`)."""

    model: str  # "step" (first principles) | "share" (the workload's communication share) | "none"
    share: float  # exposed communication share of the reference step
    binding: str  # the ring's slowest link on this offer: "nvlink" | "network"
    bus_ref_gbs: float  # the all-reduce bus bandwidth on the reference (full fabric)
    bus_offer_gbs: float  # ... and on this offer
    intra_fraction: float
    inter_fraction: float  # after the TCP efficiency, where it applies
    tcp: bool
    tcp_efficiency: float  # applied to inter_fraction where tcp (1.0 otherwise)
    nodes: int
    gpus_per_node: int
    b_intra_gbs: float
    b_net_gbs: float  # this offer's network bus bandwidth (before overhead fractions)
    network_assumed: bool  # the offer gave no network; the reference fabric was used
    comm_s: float = 0.0  # step mode: all-reduce seconds on the reference
    step_s: float = 0.0  # step mode: T_ref in seconds
    b_net_ref_gbs: float = 0.0  # the reference fabric's network bus bandwidth
    ref_gbps_per_gpu: float = 0.0  # the reference fabric, Gbit/s per GPU
    assumed_gbps_per_gpu: float = 0.0  # where network_assumed: the common cluster's Gbit/s per GPU assumed


@dataclass(frozen=True)
class Slowdown:
    total: float  # time on this offer over the reference (same GPU, ideal dedicated bare metal, full fabric)
    terms: Terms
    platform: float  # 1 + compute + intra_node + inter_node + straggler (before input waits)
    bound: str  # compute | communication | data
    data_wait: float  # d: the share of time the GPUs wait on input (0 when not input-bound)
    comm: CommInputs
    gpu_speed_factor: float
    speed_source: str  # same-gpu | measured | benchmark:<id> | roofline:bf16 | roofline:inference
    multi_node: bool
    low: float = 0.0  # the slowdown's range over the overhead ranges and an unknown tenancy
    high: float = 0.0
    data_sharpness: float = 4.0  # k of the input-wait smooth maximum (catalog)

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

    @property
    def stretch(self) -> float:
        """Run time on this offer over the workload's hours on its first GPU's reference."""
        return self.total * self.gpu_speed_factor

    @property
    def reference(self) -> str:
        """The reference the slowdown is measured against, in words (`--explain`, JSON)."""
        c = self.comm
        link = f"GPU links {c.b_intra_gbs:g} GB/s"
        if c.nodes > 1:
            return (f"dedicated bare metal, same GPU, {c.nodes} x {c.gpus_per_node} GPUs, {link}, "
                    f"{c.ref_gbps_per_gpu:g} Gbit/s InfiniBand RDMA per GPU")
        return f"dedicated bare metal, same GPU, one node, {link}"


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


def _bandwidths(offer: Offer, catalog: Catalog, gpus_per_node: int,
                full_fabric: bool = False) -> tuple[float, float, float, bool]:
    """(B_intra, B_net of the offer, B_net of the reference fabric, whether the offer's network was assumed).

    The reference fabric is `reference_fabric_gbps_per_gpu` per GPU of the node as laid out; an offer
    that states no network is taken to have a common cluster's `reference_network_gbps_per_gpu` (or,
    with `full_fabric`, the low end of its range, the reference fabric itself); a warning says so."""
    spec = catalog.gpus.get(offer.gpu)
    b_intra = max(spec.gpu_gpu_gbs if spec else 0.0, 32.0) / 2  # PCIe Gen4 x16 as the floor
    eff = float(catalog.defaults["link_efficiency"])
    ref = float(catalog.defaults["reference_fabric_gbps_per_gpu"]) * gpus_per_node / 8 * eff
    if offer.network_gbps is not None:  # the node's NICs, shared in proportion to the GPUs the job uses there
        share = min(1.0, gpus_per_node / offer.gpus_per_node)
        return b_intra, offer.network_gbps * share / 8 * eff, ref, False
    if full_fabric:
        return b_intra, ref, ref, True
    return b_intra, float(catalog.defaults["reference_network_gbps_per_gpu"]) * gpus_per_node / 8 * eff, ref, True


def smooth_min(a: float, b: float, k: float) -> float:
    """(a^-k + b^-k)^(-1/k): below min(a, b), equal to it as k -> infinity; 0 when either is 0."""
    if a <= 0.0 or b <= 0.0:
        return 0.0
    m = min(a, b)  # scaled, so that large k cannot overflow
    return m * ((a / m) ** -k + (b / m) ** -k) ** (-1.0 / k)


def input_wait(workload: Workload, catalog: Catalog) -> float:
    """d, the share of the reference step the GPUs wait on input (module docstring)."""
    if workload.data_wait is not None:
        return workload.data_wait
    u = workload.utilization
    tau = float(catalog.defaults["utilization_threshold"])
    half = float(catalog.defaults["utilization_ramp"])
    x = min(1.0, max(0.0, (u - (tau - half)) / (2 * half)))
    return (1.0 - u) * (1.0 - x * x * (3.0 - 2.0 * x))


def hide_behind_input(platform: float, d: float, k: float) -> float:
    """The step with input waits d (module docstring): ((1-d)^k s^k + 1 - (1-d)^k)^(1/k)."""
    if d <= 0.0:
        return platform
    g = 1.0 - d
    return float((1.0 + g**k * (platform**k - 1.0)) ** (1.0 / k))  # exactly 1 where the platform is


def gpu_speed(workload: Workload, gpu: str, catalog: Catalog) -> tuple[float, str]:
    """(time on `gpu` over time on the workload's first GPU, where the figure came from)."""
    ref = workload.gpus_allowed[0]
    if gpu == ref:
        return 1.0, "same-gpu"
    measured = dict(workload.speed)
    if gpu in measured:
        return measured.get(ref, 1.0) / measured[gpu], "measured"
    kinds = {workload.kind}
    for entry in catalog.defaults.get("gpu_speed", ()):
        if not kinds & set(entry["kinds"]):
            continue
        fast, slow, ratio = entry["faster"], entry["slower"], float(entry["ratio"])
        if ref in slow and gpu in fast:
            return 1.0 / ratio, f"benchmark:{entry['id']}"
        if ref in fast and gpu in slow:
            return ratio, f"benchmark:{entry['id']}"
    if ref not in catalog.gpus or gpu not in catalog.gpus:
        return 1.0, "unknown"
    a, b = catalog.gpus[ref], catalog.gpus[gpu]
    ratio = b.bf16_tflops / a.bf16_tflops
    if workload.kind == "inference":
        return 1.0 / math.sqrt(ratio * (b.hbm_tbs / a.hbm_tbs)), "roofline:inference"
    return 1.0 / ratio, "roofline:bf16"


def card_slice(workload: Workload, offer: Offer, catalog: Catalog) -> tuple[float, float, float]:
    """(billed fraction of a card, memory fraction of the card, interference) of fractional work.

    Whole-card work: (1, 1, 0). A fraction s of a card (`gpus: 0.5`) on an offer with `sharing:`
    mig: ceil(7 s) / 7 of the card, the profile's memory, no interference (hardware isolation), on a
    GPU that has MIG (else a whole card); mps / time-slicing: s of the card and of its memory, the
    mode's interference (catalog `sharing`, sourced); no `sharing`: a whole card, alone."""
    s = workload.share
    if s >= 1.0 or offer.sharing is None:
        return 1.0, 1.0, 0.0
    mode = catalog.defaults["sharing"][offer.sharing]
    if offer.sharing == "mig":
        if offer.gpu not in mode["gpus"]:
            return 1.0, 1.0, 0.0
        k = min(int(mode["slices"]), math.ceil(s * int(mode["slices"]) - 1e-9))
        return k / int(mode["slices"]), float(mode["memory"][k]), float(mode["interference"])
    return s, s, float(mode["interference"])


def _evaluate(workload: Workload, offer: Offer, catalog: Catalog, oc: float, fi: float, fe: float,
              jitter: Jitter, full_fabric: bool = False) -> Slowdown:
    """The slowdown at the given compute overhead, bandwidth fractions and jitter (module docstring)."""
    n = workload.gpus
    oc += card_slice(workload, offer, catalog)[2]  # sharing a card: the mode's interference, on compute
    nodes, g = layout(workload, offer)
    multi = nodes > 1
    tcp = multi and offer.rdma == "none"
    tcp_eff = float(catalog.defaults["tcp_efficiency"]) if tcp else 1.0
    fe *= tcp_eff
    b_intra, b_net, b_net_ref, assumed = _bandwidths(offer, catalog, g, full_fabric)
    if multi:
        bus_ref = min(b_intra, b_net_ref)  # the reference: full fabric, all bandwidth
        bus1 = min(b_intra * fi, b_net_ref)  # after the intra-node loss
        bus2 = min(b_intra * fi, b_net * fe)  # and on the offer's own network, at its fraction
    else:
        bus_ref = b_intra
        bus1 = bus2 = b_intra * fi
    binding = "network" if multi and b_net * fe < b_intra * fi else "nvlink"

    comm_s = step_s = 0.0
    if workload.step is not None and n > 1:
        st = workload.step
        c, p = st.compute_s, st.overlap
        k = float(catalog.defaults["overlap_sharpness"])
        ring = 2 * (n - 1) / n * st.gradient_gb  # GB each GPU moves per all-reduce

        def step(compute: float, bus: float) -> float:
            t = ring / bus
            return compute + t - smooth_min(t, p * compute, k)

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
    straggler = expected_max_jitter(jitter, n)
    platform = 1 + compute_t + intra_t + inter_t + straggler

    d = input_wait(workload, catalog)
    k_data = float(catalog.defaults["data_sharpness"])
    total = hide_behind_input(platform, d, k_data)
    compute_offer = (1 - share) * (1 + oc) if model != "step" else (platform - straggler - exposed_offer)
    if d > 0 and (1 - d) * platform < 1.0:
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
                        b_net_gbs=b_net, network_assumed=assumed and multi, comm_s=comm_s, step_s=step_s,
                        b_net_ref_gbs=b_net_ref,
                        ref_gbps_per_gpu=float(catalog.defaults["reference_fabric_gbps_per_gpu"]),
                        assumed_gbps_per_gpu=float(catalog.defaults["reference_network_gbps_per_gpu"])),
        gpu_speed_factor=speed,
        speed_source=source,
        multi_node=multi,
        low=total,
        high=total,
        data_sharpness=k_data,
    )


def _corners(workload: Workload, offer: Offer, catalog: Catalog, ov: Overhead) -> list[float]:
    """The total at the favourable and the unfavourable corner of `ov`'s ranges (the favourable one on
    the full fabric where the offer states no network)."""
    j = ov.jitter
    return [_evaluate(workload, offer, catalog, ov.compute.low, ov.intra_node.high, ov.inter_node.high, j,
                      full_fabric=True).total,
            _evaluate(workload, offer, catalog, ov.compute.high, ov.intra_node.low, ov.inter_node.low, j).total]


def _sync_group(workload: Workload) -> Workload:
    """The GPUs that step together: all of them, but one replica of a service (`service:`), whose
    replicas answer requests independently (no all-reduce, no waiting for the slowest of them)."""
    sv = workload.service
    if sv is None or sv.gpus_per_replica >= workload.gpus:
        return workload
    return dataclasses.replace(workload, gpus=sv.gpus_per_replica, requires=workload.requires - {"multi-node"})


def slowdown(workload: Workload, offer: Offer, catalog: Catalog) -> Slowdown:
    """The slowdown and its terms (module docstring) at the middle of every overhead range, with its
    range (`low`, `high`) over the ranges' corners and, where the tenancy is unknown, both tenancies."""
    workload = _sync_group(workload)
    ov = offer.overhead
    mid = _evaluate(workload, offer, catalog, ov.compute.mid, ov.intra_node.mid, ov.inter_node.mid, ov.jitter)
    values = [mid.total, *_corners(workload, offer, catalog, ov)]
    if offer.overhead_alt is not None:
        values += _corners(workload, offer, catalog, offer.overhead_alt)
    return Slowdown(total=mid.total, terms=mid.terms, platform=mid.platform, bound=mid.bound,
                    data_wait=mid.data_wait, comm=mid.comm, gpu_speed_factor=mid.gpu_speed_factor,
                    speed_source=mid.speed_source, multi_node=mid.multi_node, low=min(values), high=max(values),
                    data_sharpness=mid.data_sharpness)
