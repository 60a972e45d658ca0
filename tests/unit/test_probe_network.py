"""Interfaces, RDMA (RoCE vs InfiniBand) and GPUDirect readiness from fixture trees."""

from __future__ import annotations

from pathlib import Path

from _probe_fakes import bare_metal_tree, vm_tree, write_tree

from gpuplan.probe._fs import Root
from gpuplan.probe.network import gpudirect_rdma, interfaces, rdma_devices


def test_bare_metal_interfaces_and_rdma(tmp_path: Path) -> None:
    fs = Root(bare_metal_tree(tmp_path))
    rdma = rdma_devices(fs)
    assert [(r["device"], r["link_layer"], r["rate_gbps"], r["state"]) for r in rdma] == [
        ("mlx5_0", "InfiniBand", 400.0, "ACTIVE"), ("mlx5_1", "RoCE", 200.0, "ACTIVE")]
    nets = {n["name"]: n for n in interfaces(fs)}
    assert "lo" not in nets
    assert nets["eno1"]["speed_gbps"] == 25.0 and nets["eno1"]["rdma"] is None
    assert nets["ens1f0"]["rdma"]["link_layer"] == "RoCE"
    assert nets["docker0"]["virtual"] is True and nets["docker0"]["speed_gbps"] is None
    # the InfiniBand port has no netdev (no IPoIB): it is listed by device/port with its rate
    assert nets["mlx5_0/1"]["speed_gbps"] == 400.0
    assert nets["mlx5_0/1"]["rdma"]["link_layer"] == "InfiniBand"


def test_gpudirect(tmp_path: Path) -> None:
    assert gpudirect_rdma(Root(bare_metal_tree(tmp_path)))["peermem_loaded"] is True
    other = tmp_path / "other"
    write_tree(other, {"/proc/modules": "nvidia 1 0 - Live 0x0\n"})
    assert gpudirect_rdma(Root(other))["peermem_loaded"] is False
    legacy = tmp_path / "legacy"
    write_tree(legacy, {"/proc/modules": "nv_peer_mem 1 0 - Live 0x0\n"})
    assert gpudirect_rdma(Root(legacy))["peermem_loaded"] is True
    assert gpudirect_rdma(Root(tmp_path / "none"))["peermem_loaded"] is None


def test_virtio_nic_has_unknown_speed(tmp_path: Path) -> None:
    nets = interfaces(Root(vm_tree(tmp_path)))
    assert nets == [{"name": "eth0", "speed_gbps": None, "rdma": None, "operstate": "up", "virtual": False}]


def test_garbage_speed_is_unknown(tmp_path: Path) -> None:
    write_tree(tmp_path, {"/sys/class/net/eth9/speed": "fast\n", "/sys/class/net/eth9/device/x": ""})
    assert interfaces(Root(tmp_path))[0]["speed_gbps"] is None
