"""GPU flags on the command line resolve through the one alias table (issue 12): `simulate --gpu`,
`audit --gpu-type`; an unknown or ambiguous name is exit 2 with the choices."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplan.cli import main

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "examples" / "seed-910b.yaml"
LOG = ROOT / "tests" / "fixtures" / "telemetry" / "saga-monitor.csv"


def _trace(tmp_path: Path) -> Path:
    p = tmp_path / "t.csv"
    p.write_text("submit_time,duration,gpus\n0,3600,2\n1800,3600,4\n", encoding="utf-8")
    return p


@pytest.mark.parametrize("name", ["910B", "Ascend910B", "Ascend 910B", "ascend-910b"])
def test_simulate_gpu_takes_names_as_people_write_them(tmp_path: Path, name: str) -> None:
    assert main(["simulate", str(_trace(tmp_path)), "-r", "0:8:8", "--scenario", str(SEED), "--gpu", name,
                 "-o", "json"]) == 0


def test_simulate_unknown_gpu_is_exit_2_with_the_closest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(_trace(tmp_path)), "-r", "0:8:8", "--scenario", str(SEED), "--gpu", "H1000"]) == 2
    err = capsys.readouterr().err
    assert "--gpu" in err and "h100-sxm" in err


def test_audit_gpu_type_resolves_and_refuses_ambiguous(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "d.csv"
    assert main(["audit", str(LOG), "--gpu-type", "RTX 4090", "--demand-out", str(out)]) == 0
    assert out.read_text(encoding="utf-8").splitlines()[1].split(",")[1] == "rtx-4090"
    capsys.readouterr()
    assert main(["audit", str(LOG), "--gpu-type", "A100", "--demand-out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "ambiguous" in err and "a100-80g" in err
