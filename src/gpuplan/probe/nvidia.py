"""NVIDIA GPUs through NVML (`pynvml`, from the `nvidia-ml-py` package), imported only when present.

`probe_nvidia(nvml)` takes the NVML module as a parameter: the real `pynvml` by default, a fake with
recorded answers in tests. Every query is best effort: a query the driver or GPU does not support
(NVLink on a PCIe card, MIG on a GeForce) gives None instead of failing the probe.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

NVLINK_MAX_LINKS = 18
_TOPOLOGY = {0: "SELF", 10: "PIX", 20: "PXB", 30: "PHB", 40: "NODE", 50: "SYS"}


def load_pynvml() -> Any | None:
    """The real `pynvml` module, or None when nvidia-ml-py is not installed."""
    try:
        import pynvml  # type: ignore[import-not-found]
    except ImportError:
        return None
    return pynvml


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _const(nvml: Any, name: str, default: int) -> int:
    return int(getattr(nvml, name, default))


def _try(fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return fn(*args)
    except Exception:  # NVMLError_NotSupported and friends: the feature is absent
        return None


def _call(nvml: Any, name: str, *args: Any) -> Any:
    fn = getattr(nvml, name, None)
    return _try(fn, *args) if fn is not None else None


def _cuda_version(raw: Any) -> str | None:
    if not isinstance(raw, int) or raw <= 0:
        return None
    return f"{raw // 1000}.{(raw % 1000) // 10}"


def _nvlink(nvml: Any, handle: Any) -> dict[str, Any]:
    enabled = _const(nvml, "NVML_FEATURE_ENABLED", 1)
    total = active = 0
    version: int | None = None
    for link in range(NVLINK_MAX_LINKS):
        state = _call(nvml, "nvmlDeviceGetNvLinkState", handle, link)
        if state is None:
            continue
        total += 1
        if state == enabled:
            active += 1
            version = version or _call(nvml, "nvmlDeviceGetNvLinkVersion", handle, link)
    return {"links": total, "active": active, "version": version}


def _mig(nvml: Any, handle: Any) -> dict[str, Any] | None:
    mode = _call(nvml, "nvmlDeviceGetMigMode", handle)
    if mode is None:
        return None
    current = mode[0] if isinstance(mode, list | tuple) else mode
    enabled = current == _const(nvml, "NVML_DEVICE_MIG_ENABLE", 1)
    instances: list[dict[str, Any]] = []
    if enabled:
        for j in range(_call(nvml, "nvmlDeviceGetMaxMigDeviceCount", handle) or 0):
            mh = _call(nvml, "nvmlDeviceGetMigDeviceHandleByIndex", handle, j)
            if mh is None:
                continue
            mem = _call(nvml, "nvmlDeviceGetMemoryInfo", mh)
            name = _call(nvml, "nvmlDeviceGetName", mh)
            instances.append({
                "name": _text(name) if name is not None else None,
                "memory_gb": round(mem.total / 1024**3, 1) if mem is not None else None,
            })
    return {"enabled": enabled, "instances": instances}


def _processes(nvml: Any, handle: Any) -> list[dict[str, Any]]:
    procs = _call(nvml, "nvmlDeviceGetComputeRunningProcesses", handle) or []
    out = []
    for p in procs:
        used = getattr(p, "usedGpuMemory", None)
        out.append({"pid": getattr(p, "pid", None),
                    "memory_gb": round(used / 1024**3, 2) if isinstance(used, int) else None})
    return out


def _p2p(nvml: Any, handles: list[Any]) -> list[dict[str, str]]:
    """Per GPU, to each other GPU: 'NV' (NVLink P2P) or the PCIe path (PIX, PXB, PHB, NODE, SYS)."""
    ok = _const(nvml, "NVML_P2P_STATUS_OK", 0)
    caps_nvlink = _const(nvml, "NVML_P2P_CAPS_INDEX_NVLINK", 3)
    out: list[dict[str, str]] = []
    for i, hi in enumerate(handles):
        row: dict[str, str] = {}
        for j, hj in enumerate(handles):
            if i == j:
                continue
            if _call(nvml, "nvmlDeviceGetP2PStatus", hi, hj, caps_nvlink) == ok:
                row[str(j)] = "NV"
            else:
                level = _call(nvml, "nvmlDeviceGetTopologyCommonAncestor", hi, hj)
                row[str(j)] = _TOPOLOGY.get(level, "?") if level is not None else "?"
        out.append(row)
    return out


def probe_nvidia(nvml: Any | None, match_gpu: Callable[[str], Any] | None = None) -> dict[str, Any]:
    """{'available': bool, 'reason': str|None, 'gpus': [...]} from an NVML module (None: not installed)."""
    if nvml is None:
        return {"available": False, "reason": "nvidia-ml-py (pynvml) is not installed", "gpus": []}
    try:
        nvml.nvmlInit()
    except Exception as exc:
        return {"available": False, "reason": f"NVML did not initialise: {exc}", "gpus": []}
    try:
        count = _call(nvml, "nvmlDeviceGetCount") or 0
        driver = _call(nvml, "nvmlSystemGetDriverVersion")
        cuda = _cuda_version(_call(nvml, "nvmlSystemGetCudaDriverVersion"))
        sm = _const(nvml, "NVML_CLOCK_SM", 1)
        memclk = _const(nvml, "NVML_CLOCK_MEM", 2)
        handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
        p2p = _p2p(nvml, handles) if len(handles) > 1 else [{} for _ in handles]
        gpus: list[dict[str, Any]] = []
        for i, h in enumerate(handles):
            name = _text(_call(nvml, "nvmlDeviceGetName", h) or "unknown")
            mem = _call(nvml, "nvmlDeviceGetMemoryInfo", h)
            pci = _call(nvml, "nvmlDeviceGetPciInfo", h)
            ecc = _call(nvml, "nvmlDeviceGetEccMode", h)
            spec = match_gpu(name) if match_gpu else None
            gpus.append({
                "index": i,
                "vendor": "nvidia",
                "model": name,
                "catalog_id": spec.id if spec is not None else None,
                "memory_gb": round(mem.total / 1024**3, 1) if mem is not None else None,
                "uuid": _text(u) if (u := _call(nvml, "nvmlDeviceGetUUID", h)) is not None else None,
                "pci_bus_id": _text(pci.busId) if pci is not None else None,
                "driver_version": _text(driver) if driver is not None else None,
                "cuda_version": cuda,
                "mig": _mig(nvml, h),
                "nvlink": _nvlink(nvml, h),
                "p2p": p2p[i],
                "pcie": {
                    "gen": _call(nvml, "nvmlDeviceGetCurrPcieLinkGeneration", h),
                    "width": _call(nvml, "nvmlDeviceGetCurrPcieLinkWidth", h),
                    "max_gen": _call(nvml, "nvmlDeviceGetMaxPcieLinkGeneration", h),
                    "max_width": _call(nvml, "nvmlDeviceGetMaxPcieLinkWidth", h),
                },
                "ecc": (bool(ecc[0]) if isinstance(ecc, list | tuple) else None),
                "clocks_mhz": {
                    "sm": _call(nvml, "nvmlDeviceGetClockInfo", h, sm),
                    "sm_max": _call(nvml, "nvmlDeviceGetMaxClockInfo", h, sm),
                    "mem": _call(nvml, "nvmlDeviceGetClockInfo", h, memclk),
                    "mem_max": _call(nvml, "nvmlDeviceGetMaxClockInfo", h, memclk),
                },
                "processes": _processes(nvml, h),
            })
        return {"available": True, "reason": None, "gpus": gpus}
    finally:
        _call(nvml, "nvmlShutdown")
