"""probe_node end to end on fixture trees and fakes, and the checks it yields."""

from __future__ import annotations

from pathlib import Path

from _probe_fakes import (
    GOLDEN,
    FakeBackend,
    a100_mig_node,
    bare_metal_tree,
    container_on_vm_tree,
    h100_node,
    k8s_pod_tree,
    pcie_pair_node,
    vm_tree,
)

from gpuplan.contracts.probe_document import to_json
from gpuplan.i18n import catalog as messages
from gpuplan.probe import SCHEMA, probe_node
from gpuplan.probe.checks import run_checks


def _status(report) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {c.id: c.status for c in report.checks}


def test_bare_metal_h100_node_passes_links_and_network(tmp_path: Path) -> None:
    rep = probe_node(bare_metal_tree(tmp_path), nvml=h100_node())
    st = _status(rep)
    assert st["network_speed"] == "pass" and st["rdma"] == "pass" and st["deployment"] == "pass"
    assert st["gpu_interconnect"] == "pass" and st["gpu_shared"] == "warn" and st["bench"] == "unknown"
    doc = to_json(rep)
    assert doc["schema"] == SCHEMA
    assert list(doc) == ["schema", "host", "gpus", "network", "bench", "checks"]
    assert set(doc["checks"][0]) == {"id", "status", "detail"}
    net = next(c for c in doc["checks"] if c["id"] == "network_speed")
    assert net["detail"] == "mlx5_0/1 at 400 Gb/s (at least 25 Gb/s)"
    rdma = next(c for c in doc["checks"] if c["id"] == "rdma")
    assert "GPUDirect peer memory loaded: yes" in rdma["detail"]


def test_mig_node_with_a_down_link_fails(tmp_path: Path) -> None:
    rep = probe_node(vm_tree(tmp_path), nvml=a100_mig_node())
    st = _status(rep)
    assert st["gpu_interconnect"] == "fail" and st["deployment"] == "warn"
    assert st["network_speed"] == "unknown"
    detail = next(c for c in to_json(rep)["checks"] if c["id"] == "gpu_interconnect")["detail"]
    assert detail == "1 of 24 NVLink links are down"


def test_pcie_pair_warns(tmp_path: Path) -> None:
    rep = probe_node(k8s_pod_tree(tmp_path), nvml=pcie_pair_node())
    assert _status(rep)["gpu_interconnect"] == "warn"
    assert rep.data["host"]["deployment"] == "container"


def test_nvlink_gpu_without_links_fails(tmp_path: Path) -> None:
    nvml = h100_node()
    for d in nvml.devices:
        del d["nvlink_states"]
    assert _status(probe_node(tmp_path, nvml=nvml))["gpu_interconnect"] == "fail"


def test_ascend_node_through_runner(tmp_path: Path) -> None:
    text = (GOLDEN / "npu-smi-info-910b.txt").read_text()
    rep = probe_node(bare_metal_tree(tmp_path), nvml=None,
                     runner=lambda argv: text if argv[0] == "npu-smi" else None)
    assert len(rep.data["gpus"]) == 8
    st = _status(rep)
    assert st["gpu_interconnect"] == "unknown" and st["gpu_shared"] == "warn"


def test_bench_checks_pass_and_warn(tmp_path: Path) -> None:
    rep = probe_node(container_on_vm_tree(tmp_path), nvml=h100_node(), bench=True,
                     bench_backend=FakeBackend(name="NVIDIA H100 80GB HBM3", copy_tbs=2.0))
    st = _status(rep)
    assert st["bench_hbm_copy"] == "warn"  # 2.0 of 3.35 TB/s = 60%
    assert st["bench_matmul_bf16"] == "pass"  # 750/989 = 76%: the matmul's floor is 70%
    assert st["bench_allreduce_busbw"] == "pass" and st["bench_h2d_pinned"] == "pass"
    slow = probe_node(container_on_vm_tree(tmp_path / "slow"), nvml=h100_node(), bench=True,
                      bench_backend=FakeBackend(name="NVIDIA H100 80GB HBM3", tflops=680.0))
    matmul = next(c for c in to_json(slow, "en")["checks"] if c["id"] == "bench_matmul_bf16")
    assert matmul == {"id": "bench_matmul_bf16", "status": "warn",
                      "detail": "680 TFLOPS = 69% of spec, below 70%"}
    doc = to_json(rep, "zh")
    hbm = next(c for c in doc["checks"] if c["id"] == "bench_hbm_copy")
    assert hbm["detail"] == "2 TB/s = 规格的 60%，低于 80%"


def test_bench_without_gpu_or_torch(tmp_path: Path) -> None:
    rep = probe_node(vm_tree(tmp_path), nvml=None, bench=True, torch=None)
    assert rep.data["bench"]["ran"] is False
    assert rep.data["bench"]["reason"].startswith("no GPU found on this node")
    rep = probe_node(vm_tree(tmp_path), nvml=h100_node(), bench=True, torch=None)
    assert "torch is not installed" in rep.data["bench"]["reason"]
    rep = probe_node(vm_tree(tmp_path), nvml=None, bench=True, bench_backend=FakeBackend(count=0))
    assert rep.data["bench"]["reason"] == "torch sees no CUDA GPU; nothing to benchmark"


def test_fixture_root_consults_nothing_outside(tmp_path: Path) -> None:
    """On a non-"/" root the defaults use no NVML, no programs and the tree's environment."""
    rep = probe_node(k8s_pod_tree(tmp_path))
    assert rep.data["host"]["gpu_drivers"]["nvml"]["available"] is False
    assert rep.data["host"]["container"]["runtime"] == "kubernetes"
    assert not any("systemd-detect-virt" in e for e in rep.data["host"]["virtualization"]["evidence"])


def test_every_check_key_has_both_languages(tmp_path: Path) -> None:
    import re

    src = (Path(__file__).resolve().parents[2] / "src/gpuplan/probe/checks.py").read_text()
    keys = set(re.findall(r'"((?:network|rdma|interconnect|nvlink|pcie|deployment|gpu|bench)_[a-z_]+)"', src))
    for lang in ("en", "zh"):
        have = messages(lang)
        missing = [k for k in keys if k not in ("network_speed", "gpu_interconnect", "gpu_shared")
                   and f"probe.check.{k}" not in have]
        assert not missing, (lang, missing)
    en = {k for k in messages("en") if k.startswith("probe.")}
    zh = {k for k in messages("zh") if k.startswith("probe.")}
    assert en == zh


def test_run_checks_on_minimal_report() -> None:
    report = {"host": {"deployment": "bare-metal"}, "gpus": [], "network": [], "bench": None}
    st = {c.id: c.status for c in run_checks(report)}
    assert st == {"network_speed": "unknown", "rdma": "warn", "gpu_interconnect": "unknown",
                  "deployment": "pass", "bench": "unknown"}
