"""`compare --measured probe.json --measured-offer ID` replaces that offer's default overheads."""

import json
from pathlib import Path

import pytest
from _probe_fakes import FakeBackend, container_on_vm_tree, h100_node

from gpuplan.cli import main
from gpuplan.contracts.probe_document import to_json
from gpuplan.probe import probe_node

SCEN = """
version: 1
currency: USD
offers:
  - {id: bm, gpu: h100-sxm, mode: bare-metal, price: {amount: 2.2, per: gpu-hour}}
  - {id: ct, gpu: h100-sxm, mode: container, price: {amount: 3.0, per: gpu-hour}}
workloads:
  - {id: w, kind: training, gpu: h100-sxm, gpus: 8, hours_per_day: 24, duration: 30d, communication: 0.3}
"""


def _slowdown(capsys: pytest.CaptureFixture[str], args: list[str]) -> float:
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    return next(o for o in data["workloads"][0]["options"] if o["offer"] == "ct")["time"]["slowdown"]


def test_measured_overheads_change_the_container_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scen = tmp_path / "s.yaml"
    scen.write_text(SCEN)
    rep = probe_node(container_on_vm_tree(tmp_path / "root"), nvml=h100_node(), bench=True,
                     bench_backend=FakeBackend(name="NVIDIA H100 80GB HBM3", tflops=0.74 * 989, busbw_gbs=440.0,
                                               spread=0.0))
    probe = tmp_path / "probe.json"
    probe.write_text(json.dumps(to_json(rep)))
    default = _slowdown(capsys, ["compare", str(scen), "-o", "json"])
    measured = _slowdown(capsys, ["compare", str(scen), "-o", "json", "--measured", str(probe),
                                  "--measured-offer", "ct"])
    # a well-behaved node measures far less loss than the catalog's container defaults (1.02, 0.8, 10-15%)
    assert measured < default
    assert main(["compare", str(scen), "--measured", str(probe)]) == 2  # two offers: which one?
    assert "--measured-offer" in capsys.readouterr().err


def test_probe_without_bench_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scen = tmp_path / "s.yaml"
    scen.write_text(SCEN)
    probe = tmp_path / "probe.json"
    probe.write_text(json.dumps(to_json(probe_node(container_on_vm_tree(tmp_path / "root"), nvml=h100_node()))))
    assert main(["compare", str(scen), "--measured", str(probe), "--measured-offer", "ct"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "probe.json" in err and "--bench" in err
