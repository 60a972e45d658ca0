"""Huawei Ascend NPUs from the text of `npu-smi info` (best effort; the format is not a stable API).

The table pairs two rows per NPU: `| <npu> <name> | <health> | <power> <temp> <hugepages> |` then
`| <chip> | <bus-id> | <aicore%> <mem used / total> <hbm used / total> |`; a process table follows.
Rows that do not fit are skipped, so a format change yields fewer NPUs rather than an error.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from gpuplan.probe._fs import Runner

_HEAD = re.compile(r"^\|\s*(\d+)\s+(\S[^|]*?)\s*\|\s*([A-Za-z][^|]*?)\s*\|")
_CHIP = re.compile(r"^\|\s*(\d+)\s*\|\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d)\s*\|(.*)\|\s*$")
_PROC = re.compile(r"^\|\s*(\d+)\s+(\d+)\s*\|\s*(\d+)\s*\|\s*([^|]+?)\s*\|\s*(\d+)\s*\|")
_PAIR = re.compile(r"(\d+)\s*/\s*(\d+)")


def parse_npu_smi_info(text: str) -> dict[str, Any]:
    """{'version': str|None, 'npus': [{'npu', 'name', 'health', 'bus_id', 'hbm_used_mb', 'hbm_total_mb',
    'aicore_pct', 'processes': [...]}]} from `npu-smi info` output."""
    version = None
    m = re.search(r"npu-smi\s+(\S+)", text)
    if m:
        version = m.group(1)
    npus: list[dict[str, Any]] = []
    pending: dict[str, Any] | None = None
    in_procs = False
    for raw in text.splitlines():
        line = raw.rstrip()
        if "Process id" in line:
            in_procs = True
            continue
        if in_procs:
            p = _PROC.match(line)
            if p:
                npu_id = int(p.group(1))
                for n in npus:
                    if n["npu"] == npu_id:
                        n["processes"].append({"pid": int(p.group(3)), "name": p.group(4),
                                               "memory_mb": int(p.group(5))})
            continue
        head = _HEAD.match(line)
        if head and not head.group(2).startswith("Name"):
            pending = {"npu": int(head.group(1)), "name": head.group(2).strip(),
                       "health": head.group(3).strip()}
            continue
        chip = _CHIP.match(line)
        if chip and pending is not None:
            pairs = _PAIR.findall(chip.group(3))
            fields = chip.group(3).split()
            hbm = pairs[-1] if pairs else None
            npus.append({
                **pending,
                "chip": int(chip.group(1)),
                "bus_id": chip.group(2),
                "aicore_pct": float(fields[0]) if fields and fields[0].replace(".", "").isdigit() else None,
                "hbm_used_mb": int(hbm[0]) if hbm else None,
                "hbm_total_mb": int(hbm[1]) if hbm else None,
                "processes": [],
            })
            pending = None
    return {"version": version, "npus": npus}


def probe_ascend(runner: Runner, match_gpu: Callable[[str], Any] | None = None) -> dict[str, Any]:
    """GPU entries (the same shape as NVIDIA's, fields NPU-SMI cannot tell left None)."""
    text = runner(["npu-smi", "info"])
    if not text:
        return {"available": False, "reason": "npu-smi not found or gave no output", "gpus": []}
    parsed = parse_npu_smi_info(text)
    gpus: list[dict[str, Any]] = []
    for n in parsed["npus"]:
        model = n["name"] if n["name"].lower().startswith("ascend") else f"Ascend {n['name']}"
        spec = match_gpu(model) if match_gpu else None
        gpus.append({
            "index": n["npu"],
            "vendor": "huawei",
            "model": model,
            "catalog_id": spec.id if spec is not None else None,
            "memory_gb": round(n["hbm_total_mb"] / 1024, 1) if n["hbm_total_mb"] else None,
            "health": n["health"],
            "pci_bus_id": n["bus_id"],
            "driver_version": parsed["version"],
            "nvlink": None,
            "hccs": None,  # `npu-smi info -t topo` is not parsed yet
            "processes": [{"pid": p["pid"], "memory_gb": round(p["memory_mb"] / 1024, 2)}
                          for p in n["processes"]],
        })
    return {"available": bool(gpus), "reason": None if gpus else "npu-smi output had no NPU rows",
            "gpus": gpus}
