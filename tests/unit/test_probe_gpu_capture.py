"""benchmarks/probe_gpu.py --host-tree: the capture of this machine's host files replays to the same
host section (what made tests/fixtures/probe-h200/host-tree.tar.gz on the H200)."""

from __future__ import annotations

import importlib.util
import json
import tarfile
from pathlib import Path
from types import ModuleType

from gpuplan.probe._fs import Root
from gpuplan.probe.host import probe_host
from gpuplan.probe.network import gpudirect_rdma, interfaces

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "probe_gpu.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("probe_gpu", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_capture_of_this_machine_replays(tmp_path: Path) -> None:
    dest = tmp_path / "host-tree.tar.gz"
    meta = _script().capture_host_tree(dest)
    with tarfile.open(dest) as tar:
        names = tar.getnames()
        tar.extractall(tmp_path / "x", filter="data")
    assert "capture.json" in names and json.loads((tmp_path / "x" / "capture.json").read_text()) == meta
    # only `container` and KUBERNETES_* are kept of the environment: not PATH, nor anything secret
    assert "PATH=" not in (tmp_path / "x" / "tree" / "proc" / "self" / "environ").read_text()
    answers = {tuple(r["argv"]): r["stdout"] for r in meta["runner"]}
    fs = Root(tmp_path / "x" / "tree")
    host = probe_host(fs, meta["env"], lambda argv: answers.get(tuple(argv)))
    host["gpudirect_rdma"] = gpudirect_rdma(fs)
    assert host == meta["host"]
    assert interfaces(fs) == meta["network"]
