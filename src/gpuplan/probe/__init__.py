"""`gpuplan probe`: what this node is (container, VM, bare metal, with evidence), its GPUs, links and
network, and optionally what they deliver (micro-benchmarks), with checks against the catalog.

Everything the probe reads is injectable: file reads go through `root` (a fixture tree in tests),
external programs through `runner`, NVML through `nvml` (a module), benchmarks through `bench_backend`.
On a fixture root (anything but "/") the defaults consult nothing outside the tree: no NVML,
no `systemd-detect-virt`, no `npu-smi`, and the environment is the tree's `proc/self/environ`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gpuplan.probe._fs import Root, Runner, env_for, no_runner, subprocess_runner
from gpuplan.probe.checks import Check, run_checks

SCHEMA = "gpuplan.probe/1"
AUTO: Any = "auto"


@dataclass
class ProbeReport:
    """The plain-data report (everything but the checks' wording) and the checks."""

    data: dict[str, Any]
    checks: list[Check] = field(default_factory=list)


def _bench_section(
    gpus: list[dict[str, Any]], drivers: dict[str, Any], torch: Any, backend: Any, match_gpu: Any
) -> dict[str, Any]:
    from gpuplan.probe.bench import TorchBackend, load_torch, run_bench

    if backend is None:
        torch = load_torch() if torch is AUTO else torch
        if torch is None:
            if not gpus:
                why = "; ".join(f"{k}: {v['reason']}" for k, v in drivers.items() if v.get("reason"))
                return {"ran": False, "reason": f"no GPU found on this node ({why}); nothing to benchmark",
                        "device": None, "results": {}}
            return {"ran": False, "reason": "torch is not installed: pip install 'gpuplan[bench]'",
                    "device": None, "results": {}}
        backend = TorchBackend(torch)
    if backend.device_count() < 1:
        what = "an Ascend NPU (torch_npu benchmarks are not implemented)" if gpus else "no CUDA GPU"
        return {"ran": False, "reason": f"torch sees {what}; nothing to benchmark", "device": None,
                "results": {}}
    pcie = next((g.get("pcie") for g in gpus if g.get("vendor") == "nvidia"), None)
    return run_bench(backend, match_gpu, pcie)


def probe_node(
    root: str | os.PathLike[str] = "/",
    *,
    env: Mapping[str, str] | None = None,
    runner: Runner | None = None,
    nvml: Any = AUTO,
    bench: bool = False,
    torch: Any = AUTO,
    bench_backend: Any = None,
    catalog: Any = None,
) -> ProbeReport:
    from gpuplan.probe.ascend import probe_ascend
    from gpuplan.probe.host import probe_host
    from gpuplan.probe.network import gpudirect_rdma, interfaces
    from gpuplan.probe.nvidia import load_pynvml, probe_nvidia

    fs = Root(root)
    if runner is None:
        runner = subprocess_runner() if fs.is_real else no_runner
    if nvml is AUTO:
        nvml = load_pynvml() if fs.is_real else None
    if catalog is None:
        from gpuplan.inputs.catalog import load_catalog

        catalog = load_catalog()
    match_gpu = catalog.match_gpu

    host = probe_host(fs, env_for(fs, env), runner)
    host["gpudirect_rdma"] = gpudirect_rdma(fs)
    nv = probe_nvidia(nvml, match_gpu)
    asc = probe_ascend(runner, match_gpu)
    gpus = nv["gpus"] + asc["gpus"]
    drivers = {"nvml": {"available": nv["available"], "reason": nv["reason"]},
               "npu_smi": {"available": asc["available"], "reason": asc["reason"]}}
    host["gpu_drivers"] = drivers
    data: dict[str, Any] = {
        "schema": SCHEMA,
        "host": host,
        "gpus": gpus,
        "network": interfaces(fs),
        "bench": _bench_section(gpus, drivers, torch, bench_backend, match_gpu) if bench else None,
    }
    min_gbps = float(catalog.defaults.get("min_network_gbps", 25))
    return ProbeReport(data=data, checks=run_checks(data, catalog, min_gbps))


__all__ = ["AUTO", "SCHEMA", "ProbeReport", "probe_node"]
