"""Host detection on fixture trees (bare metal, VM, Kubernetes pod, container on a VM) and on this machine."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from _probe_fakes import bare_metal_tree, container_on_vm_tree, k8s_pod_tree, vm_tree, write_tree

from gpuplan.probe._fs import Root, no_runner, subprocess_runner
from gpuplan.probe.host import cgroup_limits, deployment, detect_container, detect_virtualization, probe_host


def _host(root: Path, env: dict[str, str] | None = None, runner=no_runner):  # type: ignore[no-untyped-def]
    fs = Root(root)
    return probe_host(fs, env if env is not None else fs.environ(), runner)


def test_bare_metal(tmp_path: Path) -> None:
    host = _host(bare_metal_tree(tmp_path))
    assert host["deployment"] == "bare-metal"
    assert host["container"] == {"detected": False, "runtime": None, "evidence": []}
    assert host["virtualization"]["detected"] is False
    assert host["cpu"] == {"model": "Intel(R) Xeon(R) Platinum 8480+", "logical_cpus": 8, "sockets": 2,
                           "physical_cores": 8}
    assert host["memory_gb"] == pytest.approx(2015.45, abs=0.01)
    lim = host["cgroup_limits"]
    assert (lim["version"], lim["cpu_cores"], lim["memory_gb"]) == (2, None, None)
    assert any("session-3.scope/cpu.max: max 100000" in e for e in lim["evidence"])


def test_vm(tmp_path: Path) -> None:
    host = _host(vm_tree(tmp_path))
    assert host["deployment"] == "vm"
    v = host["virtualization"]
    assert v["detected"] and v["hypervisor"] == "kvm"
    assert "/proc/cpuinfo: 'hypervisor' CPU flag set" in v["evidence"]
    assert any("sys_vendor=QEMU" in e for e in v["evidence"])
    assert any("virtio" in e for e in v["evidence"])
    assert host["container"]["detected"] is False


def test_kubernetes_pod(tmp_path: Path) -> None:
    host = _host(k8s_pod_tree(tmp_path))
    assert host["deployment"] == "container"
    c = host["container"]
    assert c["runtime"] == "kubernetes"
    assert any("kubepods" in e for e in c["evidence"])
    assert "KUBERNETES_SERVICE_HOST=10.96.0.1 in the environment" in c["evidence"]
    lim = host["cgroup_limits"]
    assert (lim["version"], lim["cpu_cores"], lim["memory_gb"]) == (1, 4.0, 32.0)
    assert host["virtualization"]["detected"] is False


def test_container_on_vm(tmp_path: Path) -> None:
    host = _host(container_on_vm_tree(tmp_path))
    assert host["deployment"] == "container-on-vm"
    assert host["container"]["runtime"] == "docker"
    assert host["container"]["evidence"] == ["/.dockerenv exists"]
    assert host["virtualization"]["hypervisor"] == "nitro"
    assert any("Amazon EC2" in e for e in host["virtualization"]["evidence"])
    lim = host["cgroup_limits"]
    assert (lim["version"], lim["cpu_cores"], lim["memory_gb"]) == (2, 2.0, 16.0)


def test_ec2_metal_instance_is_not_a_vm(tmp_path: Path) -> None:
    bare_metal_tree(tmp_path)
    write_tree(tmp_path, {"/sys/class/dmi/id/sys_vendor": "Amazon EC2\n",
                          "/sys/class/dmi/id/product_name": "i3.metal\n"})
    v = detect_virtualization(Root(tmp_path), no_runner)
    assert v["detected"] is False
    assert any("bare-metal instance" in e for e in v["evidence"])


def test_podman_marker_and_systemd_detect_virt_runner(tmp_path: Path) -> None:
    write_tree(tmp_path, {"/run/.containerenv": 'engine="podman-4.9.3"\nname="train"\n',
                          "/proc/cpuinfo": "processor\t: 0\nflags\t\t: fpu sse\n"})
    calls: list[list[str]] = []

    def runner(argv: list[str]) -> str | None:
        calls.append(argv)
        return {"--container": "podman\n", "--vm": "microsoft\n"}[argv[1]]

    fs = Root(tmp_path)
    c = detect_container(fs, {}, runner)
    v = detect_virtualization(fs, runner)
    assert c["runtime"] == "podman"
    assert "/run/.containerenv exists (engine=podman)" in c["evidence"]
    assert "systemd-detect-virt --container: podman" in c["evidence"]
    assert v == {"detected": True, "hypervisor": "microsoft",
                 "evidence": ["systemd-detect-virt --vm: microsoft"]}
    assert ["systemd-detect-virt", "--vm"] in calls and ["systemd-detect-virt", "--container"] in calls


def test_detect_virt_none_is_evidence_not_detection(tmp_path: Path) -> None:
    write_tree(tmp_path, {"/proc/cpuinfo": "flags\t\t: fpu\n"})
    v = detect_virtualization(Root(tmp_path), lambda argv: "none\n")
    assert v == {"detected": False, "hypervisor": None, "evidence": ["systemd-detect-virt --vm: none"]}


def test_empty_tree_reads_nothing_and_says_bare_metal(tmp_path: Path) -> None:
    host = _host(tmp_path, env={})
    assert host["deployment"] == "bare-metal"
    assert host["cpu"]["model"] is None and host["memory_gb"] is None
    assert host["cgroup_limits"]["version"] is None


@pytest.mark.parametrize(("c", "v", "want"), [
    (False, False, "bare-metal"), (True, False, "container"), (False, True, "vm"),
    (True, True, "container-on-vm")])
def test_deployment_table(c: bool, v: bool, want: str) -> None:
    assert deployment({"detected": c}, {"detected": v}) == want


def test_cgroup_v1_unlimited_is_none(tmp_path: Path) -> None:
    write_tree(tmp_path, {"/proc/self/cgroup": "4:memory:/a\n1:cpu:/\n",
                          "/sys/fs/cgroup/memory/a/memory.limit_in_bytes": "9223372036854771712\n",
                          "/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "-1\n",
                          "/sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000\n"})
    lim = cgroup_limits(Root(tmp_path))
    assert (lim["version"], lim["cpu_cores"], lim["memory_gb"]) == (1, None, None)
    assert lim["evidence"][1].startswith("/sys/fs/cgroup/memory/a/memory.limit_in_bytes")


# --- this machine ----------------------------------------------------------------------------------

def _real_signals() -> tuple[bool, bool]:
    docker = Path("/.dockerenv").exists()
    try:
        hyper = "hypervisor" in Path("/proc/cpuinfo").read_text()
    except OSError:
        hyper = False
    return docker, hyper


def test_real_machine_agrees_with_its_raw_signals() -> None:
    """Whatever machine runs this: the report follows the raw signals it claims to have read."""
    fs = Root("/")
    host = probe_host(fs, {}, no_runner)
    docker, hyper = _real_signals()
    assert ("/.dockerenv exists" in host["container"]["evidence"]) == docker
    assert ("/proc/cpuinfo: 'hypervisor' CPU flag set" in host["virtualization"]["evidence"]) == hyper
    if docker and hyper:
        assert host["deployment"] == "container-on-vm"


def test_this_sandbox_is_a_docker_container_on_a_kvm_vm() -> None:
    """The development and CI sandbox (checked 2026: /.dockerenv present, `hypervisor` flag set,
    systemd-detect-virt says docker / kvm, no DMI tree, cgroup v1 with no limits, no GPU)."""
    docker, hyper = _real_signals()
    if not (docker and hyper):
        pytest.skip("not the docker-on-KVM sandbox this test describes")
    from gpuplan.probe import probe_node

    report = probe_node("/", nvml=None, env={})
    host = report.data["host"]
    assert host["deployment"] == "container-on-vm"
    assert host["container"]["runtime"] == "docker"
    assert "/.dockerenv exists" in host["container"]["evidence"]
    assert "/proc/cpuinfo: 'hypervisor' CPU flag set" in host["virtualization"]["evidence"]
    if shutil.which("systemd-detect-virt"):
        assert host["virtualization"]["hypervisor"] == "kvm"
        assert "systemd-detect-virt --vm: kvm" in host["virtualization"]["evidence"]
    assert report.data["gpus"] == []
    assert {c.id: c.status for c in report.checks}["deployment"] == "warn"


def test_subprocess_runner_missing_program_gives_none() -> None:
    run = subprocess_runner()
    assert run(["gpuplan-no-such-program-xyz"]) is None
    assert run([]) is None
