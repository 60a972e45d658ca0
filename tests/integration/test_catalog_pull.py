"""`gpuplan catalog pull` through the real gpuhunt library, offline: small CSVs in gpuhunt's own catalog
format (its v2 columns, `gpuhunt._internal.storage.CATALOG_V2_FIELDS`) read through `GPUHUNT_CATALOG_DIR`."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
import yaml

from gpuplan.cli import main

pytest.importorskip("gpuhunt")

HEADER = ("instance_name,location,price,cpu,memory,gpu_count,gpu_name,gpu_memory,spot,disk_size,gpu_vendor,flags,"
          "cpu_arch,provider_data")
AWS = [
    "p5.48xlarge,us-east-1,55.04,192,2048,8,H100,80,False,,nvidia,,x86,{}",
    "p5.48xlarge,eu-west-2,63.2,192,2048,8,H100,80,False,,nvidia,,x86,{}",
    "p5.48xlarge,us-east-1,30.08,192,2048,8,H100,80,True,,nvidia,,x86,{}",
    "p4de.24xlarge,us-east-1,27.44,96,1152,8,A100,80,False,,nvidia,,x86,{}",
    "g6.xlarge,us-east-1,0.805,4,16,1,L4,24,False,,nvidia,,x86,{}",
    "m5.large,us-east-1,0.096,2,8,0,,,False,,,,x86,{}",
]
RUNPOD = [
    "NVIDIA GeForce RTX 4090,EU-RO-1,0.69,6,41,1,RTX4090,24,False,,nvidia,,x86,{}",
    "AMD Instinct MI300X OAM,EU-RO-1,2.49,24,283,1,MI300X,192,False,,amd,,x86,{}",
    "NVIDIA H100 NVL,US-KS-2,2.59,16,94,1,H100NVL,94,False,,nvidia,,x86,{}",
    "NVIDIA RTX A4000,CA,0.17,4,16,1,A4000,16,False,,nvidia,,x86,{}",
]


@pytest.fixture
def gpuhunt_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "gpuhunt"
    folder.mkdir()
    (folder / "aws.csv").write_text("\n".join([HEADER, *AWS]) + "\n")
    (folder / "runpod.csv").write_text("\n".join([HEADER, *RUNPOD]) + "\n")
    monkeypatch.setenv("GPUHUNT_CATALOG_DIR", str(folder))
    return folder


def _pull(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, dict]:
    out = tmp_path / "pulled.yaml"
    assert main(["catalog", "pull", "--out", str(out), *args]) == 0
    capsys.readouterr()
    return {o["id"]: o for o in yaml.safe_load(out.read_text())["offers"]}


def test_pull_writes_per_gpu_hour_offers_with_sources(gpuhunt_dir: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    offers = _pull(tmp_path, capsys)
    assert set(offers) == {"aws-p5-48xlarge", "aws-p5-48xlarge-spot", "aws-p4de-24xlarge", "aws-g6-xlarge",
                           "runpod-nvidia-geforce-rtx-4090", "runpod-amd-instinct-mi300x-oam",
                           "runpod-nvidia-h100-nvl"}
    p5 = offers["aws-p5-48xlarge"]
    assert "capacity" not in p5 and "preemption" not in p5
    spot = offers["aws-p5-48xlarge-spot"]
    assert spot["capacity"] == "spot" and spot["preemption"]["per"] == "instance-hour"
    assert spot["preemption"]["rate"] == [0.000137, 0.000274] and spot["preemption"]["notice"] == "2m"
    assert spot["preemption"]["source"].startswith("catalog default for aws spot: AWS Spot Instance Advisor")
    # 55.04 and 63.20 USD an hour for 8 GPUs, in two regions: a range per GPU-hour
    assert p5["price"] == {"amount": [6.88, 7.9], "per": "gpu-hour"} and p5["gpus_per_node"] == 8
    assert p5["gpu"] == "h100-sxm" and p5["currency"] == "USD"
    assert (p5["mode"], p5["tenancy"]) == ("vm", "dedicated")
    assert (offers["aws-g6-xlarge"]["mode"], offers["aws-g6-xlarge"]["tenancy"]) == ("vm", "shared-node")
    assert offers["runpod-nvidia-geforce-rtx-4090"]["mode"] == "container"
    assert p5["source"].startswith("gpuhunt:aws p5.48xlarge") and "2 locations" in p5["source"]
    assert p5["as_of"].endswith("Z") and p5["as_of"][:4].isdigit()
    assert offers["aws-p4de-24xlarge"]["gpu"] == "a100-80g"
    assert offers["runpod-nvidia-h100-nvl"]["gpu"] == "h100-nvl"
    assert offers["runpod-amd-instinct-mi300x-oam"]["gpu"] == "mi300x"
    text = (tmp_path / "pulled.yaml").read_text()
    assert "Left out (GPU not in the catalog): A4000 (1)" in text


def test_pull_filters_by_gpu_provider_and_spot(gpuhunt_dir: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    both = {"aws-p5-48xlarge", "aws-p5-48xlarge-spot"}
    assert set(_pull(tmp_path, capsys, "--gpu", "NVIDIA H100 80GB HBM3")) == both
    assert set(_pull(tmp_path, capsys, "--gpu", "H100", "--spot")) == {"aws-p5-48xlarge-spot"}
    assert set(_pull(tmp_path, capsys, "--gpu", "h100-sxm", "--on-demand")) == {"aws-p5-48xlarge"}
    assert set(_pull(tmp_path, capsys, "--provider", "runpod", "--gpu", "4090")) == {"runpod-nvidia-geforce-rtx-4090"}


def test_the_pulled_file_works_with_catalog(gpuhunt_dir: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    _pull(tmp_path, capsys, "--gpu", "H100")
    scen = tmp_path / "s.yaml"
    scen.write_text("version: 1\ncurrency: USD\noffers:\n  - use: aws-p5-48xlarge\n  - use: aws-p5-48xlarge-spot\n"
                    "workloads:\n  - {id: w, kind: training, gpu: H100, gpus: 16, hours_per_day: 8, duration: 30d}\n")
    assert main(["compare", str(scen), "--catalog", str(tmp_path / "pulled.yaml"), "-o", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    options = {o["offer"]: o for o in data["workloads"][0]["options"]}
    spot, od = options["aws-p5-48xlarge-spot"], options["aws-p5-48xlarge"]
    # the pulled spot offer is spot capacity with the catalog's AWS rate, and its cost includes lost work:
    # more GPU-hours than on demand for the same work, every one paid at the spot price
    assert spot["capacity"] == "spot" and od["capacity"] == "on-demand"
    assert spot["time"]["preemptions"] > 0 and spot["time"]["lost_gpu_hours"] > 0
    assert spot["time"]["gpu_hours_used"] == pytest.approx(od["time"]["gpu_hours_used"]
                                                           + spot["time"]["lost_gpu_hours"], rel=1e-3)
    assert spot["cost"]["rental"] == pytest.approx(spot["time"]["gpu_hours_paid"] * 30.08 / 8, rel=1e-6)
    # at AWS's 10-20%-a-month bucket two 8-GPU instances lose little: spot still wins, and says what it loses
    assert data["workloads"][0]["recommendation"]["offer"] == "aws-p5-48xlarge-spot"
    assert any("expected preemptions" in r for r in data["workloads"][0]["recommendation"]["reasons"])
    assert main(["catalog", "offers", "--catalog", str(tmp_path / "pulled.yaml"), "--gpu", "H100", "-o", "json"]) == 0
    listed = {o["id"] for o in json.loads(capsys.readouterr().out)}
    assert {"aws-p5-48xlarge", "aws-p5-48xlarge-spot", "aws-p5-h100"} <= listed


def test_pull_refuses_unknown_providers_and_missing_files(gpuhunt_dir: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "pull", "--provider", "nosuchcloud"]) == 2
    assert "unknown provider `nosuchcloud`" in capsys.readouterr().err
    assert main(["catalog", "pull", "--provider", "gcp"]) == 2
    err = capsys.readouterr().err
    assert "no gcp.csv" in err and "aws, runpod" in err


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_network_failure_is_a_clear_exit_2(monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("GPUHUNT_CATALOG_DIR", raising=False)
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", f"http://127.0.0.1:{_closed_port()}/v3")
    assert main(["catalog", "pull", "--provider", "aws"]) == 2
    err = capsys.readouterr().err
    assert "cannot download gpuhunt's price catalog" in err and "GPUHUNT_CATALOG_DIR" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
