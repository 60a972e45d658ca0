"""Overheads for `compare --measured probe.json`, from a probe document's benchmark figures.

`measured_overhead(doc, catalog)` returns the figures that replace an offer's per-mode defaults
(catalog `defaults.yaml` -> `modes.<mode>.overhead`), each None when the probe did not measure it
(the caller then keeps the default):

- `compute` (fraction of compute time lost, bare metal = 0): from the dense BF16 matmul.
  efficiency = measured TFLOPS / catalog spec; compute = max(0, 1 - efficiency / reference), where
  `reference` is the efficiency a well-run bare-metal node reaches with the same GEMM
  (REFERENCE_MATMUL_EFFICIENCY = 0.75: an estimate; cuBLAS BF16 GEMMs of n = 8192 on H100/H200 SXM
  commonly land near 70-80% of the 989 TFLOPS datasheet figure). Capped at 0.9.
- `interconnect` (fraction of bare-metal collective bandwidth delivered, bare metal = 1): NCCL
  all-reduce busbw / catalog spec, the spec being half the bidirectional `gpu_gpu_gbs` (per-direction
  NVLink bandwidth, which bare-metal 8-GPU nodes reach or slightly exceed: 8x H100 ~370-480 GB/s vs
  450). Capped at 1.0.
- `jitter` [lo, hi] (slowdown range from fluctuation): from the per-iteration matmul times,
  lo = median / best - 1, hi = p95 / best - 1.

Honest limits: the probe runs on one node for seconds. The interconnect figure is intra-node
(NVLink/PCIe) only: it says nothing of the network between nodes, which is where containers and
VMs lose most (20-45% with virtualised RoCE; see domain facts). Jitter over a few seconds
underestimates multi-tenant fluctuation over hours; a quiet moment reads as no jitter. A GPU the
catalog does not know has no spec, so no ratio and no figure. The reference efficiency is an
estimate; pass `reference_matmul_efficiency` to use one measured on your own bare metal.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any

from gpuplan.errors import GpuplanError, ProbeError

SCHEMA = "gpuplan.probe/1"
REFERENCE_MATMUL_EFFICIENCY = 0.75
MAX_COMPUTE_OVERHEAD = 0.9
MIN_JITTER_SAMPLES = 5


def _check_doc(doc: Any) -> None:
    hint = "produce it on the node with `gpuplan probe --bench -o json > probe.json`."
    if not isinstance(doc, dict):
        raise ProbeError(f"a probe document is a JSON object, got {type(doc).__name__}", field="(root)",
                         hint=hint)
    if doc.get("schema") != SCHEMA:
        raise ProbeError(f"expected schema {SCHEMA!r}, got {doc.get('schema')!r}: not a probe JSON file",
                         field="schema", hint=hint)
    for key, kind in (("host", dict), ("gpus", list)):
        if not isinstance(doc.get(key), kind):
            raise ProbeError(f"missing or malformed `{key}`", field=key, hint=hint)
    bench = doc.get("bench")
    if bench is not None and (not isinstance(bench, dict) or not isinstance(bench.get("results", {}), dict)):
        raise ProbeError("`bench` must be null or an object with `results`", field="bench", hint=hint)


def _spec(catalog: Any, bench: dict[str, Any]) -> Any:
    cid = bench.get("catalog_id")
    if cid and cid in catalog.gpus:
        return catalog.gpus[cid]
    device = bench.get("device")
    return catalog.match_gpu(device) if device else None


def _value(fig: Any) -> float | None:
    if not isinstance(fig, dict):
        return None
    v = fig.get("value")
    return float(v) if isinstance(v, int | float) and v > 0 else None


def _jitter(samples: Any) -> list[float] | None:
    if not isinstance(samples, list) or len(samples) < MIN_JITTER_SAMPLES:
        return None
    xs = sorted(float(s) for s in samples if isinstance(s, int | float) and s > 0)
    if len(xs) < MIN_JITTER_SAMPLES:
        return None
    best = xs[0]
    p95 = xs[max(0, math.ceil(0.95 * len(xs)) - 1)]
    return [round(statistics.median(xs) / best - 1, 4), round(p95 / best - 1, 4)]


def measured_overhead(
    probe_json: dict[str, Any],
    catalog: Any,
    *,
    reference_matmul_efficiency: float = REFERENCE_MATMUL_EFFICIENCY,
) -> dict[str, Any]:
    """{'compute': float|None, 'interconnect': float|None, 'jitter': [lo, hi]|None, 'evidence': [str]}."""
    _check_doc(probe_json)
    evidence = [f"node deployment: {probe_json['host'].get('deployment', 'unknown')}"]
    out: dict[str, Any] = {"compute": None, "interconnect": None, "jitter": None, "evidence": evidence}
    bench = probe_json.get("bench")
    if not bench or not bench.get("ran"):
        reason = (bench or {}).get("reason") or "the probe ran without --bench"
        evidence.append(f"no measured figures ({reason}); the offer's defaults stay")
        return out
    results = bench.get("results") or {}
    spec = _spec(catalog, bench)
    device = bench.get("device") or "?"
    if spec is None:
        evidence.append(f"GPU {device!r} is not in the catalog: no spec to compare with")
        return out

    matmul = results.get("matmul_bf16")
    matmul = matmul if isinstance(matmul, dict) else {}  # absent or malformed: no figure
    tflops = _value(matmul)
    if tflops is not None:
        eff = tflops / spec.bf16_tflops
        compute = min(MAX_COMPUTE_OVERHEAD, max(0.0, 1 - eff / reference_matmul_efficiency))
        out["compute"] = round(compute, 4)
        evidence.append(
            f"compute {out['compute']:.1%}: BF16 matmul {tflops:g} TFLOPS = {eff:.1%} of {spec.id}'s "
            f"{spec.bf16_tflops:g}, vs a bare-metal reference of {reference_matmul_efficiency:.0%}")
        jitter = _jitter(matmul.get("samples_s"))
        if jitter is not None:
            out["jitter"] = jitter
            evidence.append(f"jitter {jitter[0]:.1%}-{jitter[1]:.1%}: median and p95 of "
                            f"{len(matmul['samples_s'])} matmul iterations over the best (seconds of data: "
                            "a lower bound on multi-tenant fluctuation)")
    else:
        evidence.append("no matmul figure: compute overhead not measured")

    busbw = _value(results.get("allreduce_busbw"))
    link = spec.gpu_gpu_gbs / 2 if spec.gpu_gpu_gbs else None
    if busbw is not None and link:
        out["interconnect"] = round(min(1.0, busbw / link), 4)
        ranks = results["allreduce_busbw"].get("ranks", "?")
        evidence.append(
            f"interconnect {out['interconnect']:.1%}: all-reduce busbw {busbw:g} GB/s on {ranks} GPUs vs "
            f"{link:g} GB/s per direction ({spec.id}); intra-node only, "
            "the inter-node network is not measured")
    else:
        evidence.append("no all-reduce figure (one GPU, or no spec): interconnect not measured")
    hbm = _value(results.get("hbm_copy"))
    if hbm is not None:
        evidence.append(
            f"HBM copy {hbm:g} TB/s = {hbm / spec.hbm_tbs:.1%} of {spec.hbm_tbs:g} (reported, not used)")
    return out


def load_measured(path: str | Path, catalog: Any) -> dict[str, Any]:
    """The overheads measured on a node (`measured_overhead`) from the file `gpuplan probe --bench -o json`
    wrote; errors name the file."""
    from gpuplan.limits import load_json

    p = Path(path)
    data = load_json(p, hint="give the file `gpuplan probe -o json` wrote.")
    try:
        out = measured_overhead(data, catalog)
    except GpuplanError as exc:
        exc.file = str(p)
        raise
    if all(out.get(k) is None for k in ("compute", "interconnect", "jitter")):
        raise GpuplanError("the probe measured no overhead (no benchmark figures)", file=p, field="bench",
                           hint="run `gpuplan probe --bench -o json` on the GPU node; without --bench, "
                           "or without a GPU, there is nothing to replace the defaults with.")
    return out
