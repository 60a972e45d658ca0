"""`gpuplan probe` through the CLI entry (fixture roots) and once as a real subprocess on this machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuplan.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _tree(root: Path) -> Path:
    files = {
        ".dockerenv": "",
        "proc/cpuinfo": "processor\t: 0\nmodel name\t: Test CPU\nflags\t\t: fpu sse2 hypervisor\n",
        "proc/meminfo": "MemTotal:       8388608 kB\n",
        "proc/self/cgroup": "0::/\n",
        "sys/fs/cgroup/cgroup.controllers": "cpu memory\n",
        "sys/fs/cgroup/cpu.max": "150000 100000\n",
        "sys/fs/cgroup/memory.max": "4294967296\n",
        "sys/class/net/eth0/speed": "10000\n",
        "sys/class/net/eth0/device/vendor": "0x8086\n",
    }
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def test_json_contract(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["probe", "-o", "json", "--root", str(_tree(tmp_path))])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert list(doc) == ["schema", "host", "gpus", "network", "bench", "checks"]
    assert doc["schema"] == "gpuplan.probe/1"
    host = doc["host"]
    for key in ("deployment", "container", "virtualization", "cpu", "memory_gb", "cgroup_limits"):
        assert key in host
    assert host["deployment"] == "container-on-vm"
    assert set(host["container"]) == {"detected", "runtime", "evidence"}
    assert set(host["virtualization"]) == {"detected", "hypervisor", "evidence"}
    assert host["cgroup_limits"]["cpu_cores"] == 1.5 and host["cgroup_limits"]["memory_gb"] == 4.0
    assert doc["gpus"] == [] and doc["bench"] is None
    assert doc["network"] == [{"name": "eth0", "speed_gbps": 10.0, "rdma": None, "operstate": None,
                               "virtual": False}]
    checks = {c["id"]: c for c in doc["checks"]}
    assert checks["network_speed"]["status"] == "fail"
    assert checks["network_speed"]["detail"].startswith("fastest link eth0 at 10 Gb/s, below 25 Gb/s")
    assert all(set(c) == {"id", "status", "detail"} for c in doc["checks"])


def test_bench_without_gpu_says_so_and_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["probe", "--bench", "--root", str(_tree(tmp_path))])
    out = capsys.readouterr().out
    assert rc == 0
    assert "Benchmarks not run: no GPU found on this node" in " ".join(out.split())


def test_markdown_in_chinese(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["probe", "-o", "markdown", "--lang", "zh", "--root", str(_tree(tmp_path))])
    out = capsys.readouterr().out
    assert rc == 0
    assert out.startswith("# 节点探测\n")
    assert "| 部署形态 | 虚拟机中的容器 |" in out and "container-on-vm" not in out  # translated, not the id
    assert "| 失败 | 网络 >= 25 Gb/s |" in out


def test_root_is_hidden_from_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--bench" in out and "--root" not in out


def test_real_subprocess_on_this_machine() -> None:
    exe = Path(sys.executable).with_name("gpuplan")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "gpuplan.cli"]
    env = {**os.environ, "COLUMNS": "120"}
    proc = subprocess.run([*cmd, "probe", "--bench", "-o", "json"], capture_output=True, text=True,
                          timeout=120, env=env, cwd=ROOT, check=False)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["schema"] == "gpuplan.probe/1"
    docker = Path("/.dockerenv").exists()
    hyper = "hypervisor" in Path("/proc/cpuinfo").read_text()
    if docker and hyper:  # the sandbox this project is developed and tested in
        assert doc["host"]["deployment"] == "container-on-vm"
    if not Path("/dev/nvidia0").exists():
        assert doc["gpus"] == [] or all(g["vendor"] == "huawei" for g in doc["gpus"])
        reason = doc["bench"]["reason"]
        assert doc["bench"]["ran"] is False
        assert "nothing to benchmark" in reason or "torch is not installed" in reason
