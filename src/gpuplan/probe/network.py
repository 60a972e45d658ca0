"""Network interfaces with link speed, RDMA devices (RoCE or InfiniBand), and GPUDirect RDMA readiness.

Speeds come from `/sys/class/net/<if>/speed` (Mb/s; -1 or unreadable on virtio and many virtual NICs,
so "unknown" is common inside VMs), RDMA from `/sys/class/infiniband/<dev>/ports/<n>/{link_layer,rate,
state}`, GPUDirect RDMA from `nvidia_peermem` (or the older `nv_peer_mem`) in `/proc/modules`.
"""

from __future__ import annotations

import re
from typing import Any

from gpuplan.probe._fs import Root

_VIRTUAL_PREFIXES = ("lo", "veth", "docker", "br-", "virbr", "cni", "flannel", "cali", "ifb", "tun", "tap")


def _speed_gbps(root: Root, name: str) -> float | None:
    text = root.read_line(f"/sys/class/net/{name}/speed")
    try:
        mbps = int(text) if text is not None else -1
    except ValueError:
        return None
    return mbps / 1000 if mbps > 0 else None


def _rate_gbps(text: str | None) -> float | None:
    m = re.match(r"\s*([\d.]+)\s*Gb/sec", text or "")
    return float(m.group(1)) if m else None


def rdma_devices(root: Root) -> list[dict[str, Any]]:
    """One entry per RDMA port: device, port, link layer (RoCE/InfiniBand), rate, state, netdevs."""
    out: list[dict[str, Any]] = []
    for dev in root.listdir("/sys/class/infiniband"):
        base = f"/sys/class/infiniband/{dev}"
        netdevs = root.listdir(f"{base}/device/net")
        for port in root.listdir(f"{base}/ports"):
            layer = root.read_line(f"{base}/ports/{port}/link_layer")
            state = root.read_line(f"{base}/ports/{port}/state") or ""
            out.append({
                "device": dev,
                "port": int(port) if port.isdigit() else port,
                "link_layer": "RoCE" if layer == "Ethernet" else (layer or None),
                "rate_gbps": _rate_gbps(root.read_line(f"{base}/ports/{port}/rate")),
                "state": state.split(":", 1)[-1].strip() or None,
                "netdevs": netdevs,
            })
    return out


def _rdma_ref(r: dict[str, Any]) -> dict[str, Any]:
    return {k: r[k] for k in ("device", "link_layer", "state", "rate_gbps")}


def interfaces(root: Root, rdma: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    rdma = rdma_devices(root) if rdma is None else rdma
    by_netdev = {nd: r for r in rdma for nd in r["netdevs"]}
    out: list[dict[str, Any]] = []
    for name in root.listdir("/sys/class/net"):
        if name == "lo":
            continue
        physical = root.exists(f"/sys/class/net/{name}/device")
        r = by_netdev.get(name)
        out.append({
            "name": name,
            "speed_gbps": _speed_gbps(root, name),
            "rdma": _rdma_ref(r) if r else None,
            "operstate": root.read_line(f"/sys/class/net/{name}/operstate"),
            "virtual": not physical or name.startswith(_VIRTUAL_PREFIXES),
        })
    # RDMA ports with no network interface (plain InfiniBand without IPoIB) still count
    listed = {i["name"] for i in out}
    for r in rdma:
        if not any(nd in listed for nd in r["netdevs"]):
            out.append({
                "name": f"{r['device']}/{r['port']}",
                "speed_gbps": r["rate_gbps"],
                "rdma": _rdma_ref(r),
                "operstate": r["state"],
                "virtual": False,
            })
    return out


def gpudirect_rdma(root: Root) -> dict[str, Any]:
    """Whether a GPUDirect RDMA peer-memory module is loaded (None when /proc/modules is unreadable)."""
    text = root.read("/proc/modules")
    if text is None:
        return {"peermem_loaded": None, "evidence": ["/proc/modules unreadable (usual inside containers)"]}
    mods = {line.split()[0] for line in text.splitlines() if line.strip()}
    found = sorted(mods & {"nvidia_peermem", "nv_peer_mem"})
    if found:
        return {"peermem_loaded": True, "evidence": [f"/proc/modules: {', '.join(found)} loaded"]}
    return {"peermem_loaded": False,
            "evidence": ["/proc/modules: neither nvidia_peermem nor nv_peer_mem loaded"]}
