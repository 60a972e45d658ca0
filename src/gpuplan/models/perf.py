"""Performance of one workload on one offer, against dedicated bare metal.

    s = 1 + compute + c * (1 / i_eff - 1) + E[max of n jitter draws]

- compute: the offer's compute overhead (fraction slower on pure compute).
- c: the workload's non-overlapped communication share of a step on dedicated hardware; a step's
  communication time scales with 1 / bandwidth, so getting a fraction i of the bandwidth turns c into
  c / i (nccl-tests PERFORMANCE.md: t = 2(n-1)/n * S / B).
- i_eff = interconnect fraction, times the catalog's TCP efficiency (0.6, NVIDIA/nccl issue 209) for
  multi-node work on an offer that declares `rdma: none`.
- jitter: per-step slowdown from neighbours, uniform on [lo, hi] per worker. A synchronous job waits
  for its slowest of n workers each step, so the expected maximum applies, not the mean:
  E[max of n U(lo, hi)] = lo + (hi - lo) * n / (n + 1).

Utilisation does not enter s: it changes how much of the paid time does work (see `cost`), not how
fast a step runs. A GPU other than the workload's first choice scales the work by the ratio of dense
BF16 TFLOPS (an estimate, flagged).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplan.inputs.catalog import Catalog
from gpuplan.inputs.scenario_types import Offer, Workload


@dataclass(frozen=True)
class Slowdown:
    total: float
    compute: float
    interconnect: float
    straggler: float
    interconnect_effective: float
    gpu_speed_factor: float
    multi_node: bool


def expected_max_uniform(lo: float, hi: float, n: int) -> float:
    """E[max of n independent draws from U(lo, hi)] = lo + (hi - lo) * n / (n + 1)."""
    if n < 1:
        raise ValueError("n must be >= 1")
    return lo + (hi - lo) * n / (n + 1)


def is_multi_node(workload: Workload, offer: Offer) -> bool:
    return "multi-node" in workload.requires or workload.gpus > offer.gpus_per_node


def slowdown(workload: Workload, offer: Offer, catalog: Catalog) -> Slowdown:
    multi = is_multi_node(workload, offer)
    inter = offer.overhead.interconnect
    if multi and offer.rdma == "none":
        inter *= float(catalog.defaults["tcp_efficiency"])
    comm_term = workload.communication * (1.0 / inter - 1.0)
    lo, hi = offer.overhead.jitter
    straggler = expected_max_uniform(lo, hi, workload.gpus)
    ref = workload.gpus_allowed[0]
    speed = 1.0
    if offer.gpu != ref and ref in catalog.gpus and offer.gpu in catalog.gpus:
        speed = catalog.gpus[ref].bf16_tflops / catalog.gpus[offer.gpu].bf16_tflops
    total = 1.0 + offer.overhead.compute + comm_term + straggler
    return Slowdown(
        total=total,
        compute=offer.overhead.compute,
        interconnect=comm_term,
        straggler=straggler,
        interconnect_effective=inter,
        gpu_speed_factor=speed,
        multi_node=multi,
    )
