"""What kind of node this is: container, VM, both or neither, with the evidence; CPU, memory, cgroup limits.

All reads go through a `Root` (default "/"), `systemd-detect-virt` through an injected runner.
A detection is only as good as its signals: a container that hides `/.dockerenv` and runs in its own
cgroup namespace (so cgroup paths read "/") is found only by `systemd-detect-virt`, the environment or
the runtime's marker files; a VM that hides the `hypervisor` CPU flag and its DMI strings (some clouds'
bare-metal-like instances) is not found at all. The evidence list says what was seen.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from gpuplan.probe._fs import Root, Runner

# cgroup path fragments -> runtime, most specific first
_CGROUP_RUNTIMES: tuple[tuple[str, str], ...] = (
    ("kubepods", "kubernetes"),
    ("cri-containerd", "containerd"),
    ("crio-", "cri-o"),
    ("libpod", "podman"),
    ("docker", "docker"),
    ("containerd", "containerd"),
    ("/lxc", "lxc"),
    ("machine.slice/machine-", "systemd-nspawn"),
)

# DMI vendor/product fragments -> hypervisor name
_DMI_HYPERVISORS: tuple[tuple[str, str], ...] = (
    ("qemu", "kvm"),
    ("kvm", "kvm"),
    ("vmware", "vmware"),
    ("virtualbox", "virtualbox"),
    ("innotek", "virtualbox"),
    ("xen", "xen"),
    ("microsoft corporation virtual machine", "hyper-v"),
    ("parallels", "parallels"),
    ("bochs", "bochs"),
    ("openstack", "kvm"),
    ("google compute engine", "kvm"),
    ("alibaba cloud ecs", "kvm"),
    ("amazon ec2", "nitro"),
)

_DMI_FILES = ("sys_vendor", "product_name", "board_vendor", "bios_vendor")

_UNLIMITED = 1 << 60  # cgroup v1 writes "no limit" as a page-rounded 2**63-1


def _virt_cmd(runner: Runner, flag: str) -> str | None:
    out = runner(["systemd-detect-virt", flag])
    if out is None:
        return None
    value = out.strip().splitlines()[0].strip() if out.strip() else ""
    return value or None


def _cgroup_lines(root: Root) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for rel in ("/proc/1/cgroup", "/proc/self/cgroup"):
        text = root.read(rel)
        if text:
            out.extend((rel, line.strip()) for line in text.splitlines() if line.strip())
    return out


def detect_container(root: Root, env: Mapping[str, str], runner: Runner) -> dict[str, Any]:
    evidence: list[str] = []
    runtimes: list[str] = []
    if root.exists("/.dockerenv"):
        evidence.append("/.dockerenv exists")
        runtimes.append("docker")
    if root.exists("/run/.containerenv"):
        text = root.read("/run/.containerenv") or ""
        engine = re.search(r'engine="([^"]+)"', text)
        name = engine.group(1).split("-")[0] if engine else "podman"
        evidence.append("/run/.containerenv exists" + (f" (engine={name})" if engine else ""))
        runtimes.append(name)
    seen_paths: set[str] = set()
    for rel, line in _cgroup_lines(root):
        path = line.split(":", 2)[-1]
        for fragment, kind in _CGROUP_RUNTIMES:
            if fragment in path and path not in seen_paths:
                seen_paths.add(path)
                evidence.append(f"{rel}: cgroup path {path} ({kind})")
                runtimes.append(kind)
                break
    if env.get("KUBERNETES_SERVICE_HOST"):
        evidence.append(f"KUBERNETES_SERVICE_HOST={env['KUBERNETES_SERVICE_HOST']} in the environment")
        runtimes.append("kubernetes")
    marker = env.get("container")
    if marker:
        evidence.append(f"container={marker} in the environment")
        runtimes.append(marker)
    virt = _virt_cmd(runner, "--container")
    if virt and virt != "none":
        evidence.append(f"systemd-detect-virt --container: {virt}")
        runtimes.append(virt)
    elif virt == "none":
        evidence.append("systemd-detect-virt --container: none")
    detected = bool(runtimes)
    runtime: str | None = None
    if "kubernetes" in runtimes:
        runtime = "kubernetes"
    elif runtimes:
        runtime = runtimes[0]
    return {"detected": detected, "runtime": runtime, "evidence": evidence}


def _cpu_flags(root: Root) -> set[str]:
    text = root.read("/proc/cpuinfo") or ""
    for line in text.splitlines():
        if line.startswith(("flags", "Features")):
            return set(line.split(":", 1)[1].split())
    return set()


def detect_virtualization(root: Root, runner: Runner) -> dict[str, Any]:
    evidence: list[str] = []
    names: list[str] = []
    signals = 0
    if "hypervisor" in _cpu_flags(root):
        evidence.append("/proc/cpuinfo: 'hypervisor' CPU flag set")
        signals += 1
    dmi = {f: root.read_line(f"/sys/class/dmi/id/{f}") for f in _DMI_FILES}
    dmi_text = " ".join(v for v in dmi.values() if v).lower()
    if dmi_text:
        for fragment, name in _DMI_HYPERVISORS:
            if fragment in dmi_text:
                shown = ", ".join(f"{k}={v}" for k, v in dmi.items() if v)
                product = (dmi.get("product_name") or "").lower()
                if name == "nitro" and product.endswith(".metal"):
                    evidence.append(f"/sys/class/dmi/id: {shown} (an EC2 bare-metal instance)")
                    break
                evidence.append(f"/sys/class/dmi/id: {shown} ({name})")
                names.append(name)
                signals += 1
                break
    xen = root.read_line("/sys/hypervisor/type")
    if xen:
        evidence.append(f"/sys/hypervisor/type: {xen}")
        names.append(xen)
        signals += 1
    virt = _virt_cmd(runner, "--vm")
    if virt and virt != "none":
        evidence.append(f"systemd-detect-virt --vm: {virt}")
        names.insert(0, virt)  # it reads CPUID's vendor leaf: the most precise name
        signals += 1
    elif virt == "none":
        evidence.append("systemd-detect-virt --vm: none")
    virtio = root.listdir("/sys/bus/virtio/devices")
    if virtio and signals:
        evidence.append(f"/sys/bus/virtio/devices: {len(virtio)} virtio devices")
    return {"detected": signals > 0, "hypervisor": names[0] if names else None, "evidence": evidence}


def deployment(container: Mapping[str, Any], virtualization: Mapping[str, Any]) -> str:
    c, v = bool(container.get("detected")), bool(virtualization.get("detected"))
    if c and v:
        return "container-on-vm"
    if c:
        return "container"
    if v:
        return "vm"
    return "bare-metal"


def cpu_info(root: Root) -> dict[str, Any]:
    text = root.read("/proc/cpuinfo") or ""
    model: str | None = None
    logical = 0
    sockets: set[str] = set()
    cores: set[tuple[str, str]] = set()
    phys = ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "processor":
            logical += 1
        elif key == "model name" and model is None:
            model = value
        elif key == "physical id":
            phys = value
            sockets.add(value)
        elif key == "core id":
            cores.add((phys, value))
    return {
        "model": model,
        "logical_cpus": logical or None,
        "sockets": len(sockets) or None,
        "physical_cores": len(cores) or None,
    }


def memory_gb(root: Root) -> float | None:
    text = root.read("/proc/meminfo") or ""
    m = re.search(r"^MemTotal:\s+(\d+)\s*kB", text, re.MULTILINE)
    return round(int(m.group(1)) / 1024**2, 2) if m else None


def _int(text: str | None) -> int | None:
    try:
        return int(text.strip()) if text is not None else None
    except ValueError:
        return None


def _own_cgroup(root: Root, controller: str) -> str:
    """This process's cgroup path for a v1 controller, or the v2 path when controller is ''."""
    text = root.read("/proc/self/cgroup") or ""
    for line in text.splitlines():
        parts = line.strip().split(":", 2)
        if len(parts) != 3:
            continue
        if controller == "" and parts[0] == "0" and parts[1] == "":
            return parts[2]
        if controller and controller in parts[1].split(","):
            return parts[2]
    return "/"


def _first(root: Root, candidates: list[str]) -> tuple[str, str] | None:
    for rel in candidates:
        text = root.read_line(rel)
        if text is not None:
            return rel, text
    return None


def cgroup_limits(root: Root) -> dict[str, Any]:
    """CPU and memory limits of this process's cgroup (v2 first, then v1); None where unlimited."""
    evidence: list[str] = []
    cpu: float | None = None
    mem: float | None = None
    if root.exists("/sys/fs/cgroup/cgroup.controllers"):
        version = 2
        own = _own_cgroup(root, "").rstrip("/")
        bases = [f"/sys/fs/cgroup{own}", "/sys/fs/cgroup"] if own else ["/sys/fs/cgroup"]
        got = _first(root, [f"{b}/cpu.max" for b in bases])
        if got:
            evidence.append(f"{got[0]}: {got[1]}")
            quota, _, period = got[1].partition(" ")
            if quota != "max" and _int(quota) and _int(period):
                cpu = round(int(quota) / int(period), 2)
        got = _first(root, [f"{b}/memory.max" for b in bases])
        if got:
            evidence.append(f"{got[0]}: {got[1]}")
            value = _int(got[1])
            if value is not None and value < _UNLIMITED:
                mem = round(value / 1024**3, 2)
    elif root.exists("/sys/fs/cgroup/memory") or root.exists("/sys/fs/cgroup/cpu"):
        version = 1
        own_cpu = _own_cgroup(root, "cpu").rstrip("/")
        cpu_dirs = [f"/sys/fs/cgroup/{d}{own_cpu}" for d in ("cpu", "cpu,cpuacct") if own_cpu]
        cpu_dirs += ["/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"]
        got_q = _first(root, [f"{d}/cpu.cfs_quota_us" for d in cpu_dirs])
        got_p = _first(root, [f"{d}/cpu.cfs_period_us" for d in cpu_dirs])
        if got_q and got_p:
            evidence.append(f"{got_q[0]}: {got_q[1]}; {got_p[0]}: {got_p[1]}")
            quota_us, period_us = _int(got_q[1]), _int(got_p[1])
            if quota_us is not None and quota_us > 0 and period_us:  # a quota of -1: no limit
                cpu = round(quota_us / period_us, 2)
        own_mem = _own_cgroup(root, "memory").rstrip("/")
        mem_dirs = ([f"/sys/fs/cgroup/memory{own_mem}"] if own_mem else []) + ["/sys/fs/cgroup/memory"]
        got = _first(root, [f"{d}/memory.limit_in_bytes" for d in mem_dirs])
        if got:
            evidence.append(f"{got[0]}: {got[1]}")
            value = _int(got[1])
            if value is not None and value < _UNLIMITED:
                mem = round(value / 1024**3, 2)
    else:
        version = None
    return {"version": version, "cpu_cores": cpu, "memory_gb": mem, "evidence": evidence}


def probe_host(root: Root, env: Mapping[str, str], runner: Runner) -> dict[str, Any]:
    container = detect_container(root, env, runner)
    virtualization = detect_virtualization(root, runner)
    return {
        "deployment": deployment(container, virtualization),
        "container": container,
        "virtualization": virtualization,
        "cpu": cpu_info(root),
        "memory_gb": memory_gb(root),
        "cgroup_limits": cgroup_limits(root),
    }
