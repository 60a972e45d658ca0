"""`gpuplan audit` end to end: JSON contract, table/markdown in both languages, demand curve, errors."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from telemetry_truth import write_logs  # noqa: E402

from gpuplan.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory):
    return write_logs(tmp_path_factory.mktemp("cli"))


def _json(capsys, argv: list[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_json_contract(logs, capsys) -> None:
    out = _json(capsys, ["audit", *map(str, logs.files), "--price", "8/gpu-hour", "-o", "json"])
    assert out["schema"] == "gpuplan.audit/1"
    assert {"files", "rows", "bad_rows", "bad_by_kind"} <= set(out["input"])
    assert out["input"]["rows"] == logs.rows
    assert out["input"]["bad_by_kind"] == {k: len(v) for k, v in logs.bad.items()}
    gpu_keys = {
        "node",
        "gpu",
        "samples",
        "observed_hours",
        "gap_hours",
        "mean_util",
        "idle_share",
        "busy_share",
        "class",
        "evidence",
        "timeline",
    }
    assert all(set(g) == gpu_keys for g in out["gpus"])
    # The heat map's hourly bins: one shared start and length; the busy GPU's missing hour is null.
    tls = {(g["node"], g["gpu"]): g["timeline"] for g in out["gpus"]}
    assert {(tl["start"], tl["step_s"], len(tl["util"])) for tl in tls.values()} == {
        ("2024-03-04T00:00:00Z", 3600, 6)
    }
    assert tls[("nodeA", "4")]["util"][2] is None  # busy_gap: no sample 02:00-03:00
    assert all(v is not None and v > 0.85 for i, v in enumerate(tls[("nodeA", "4")]["util"]) if i != 2)
    assert all(v is not None and v < 0.05 for v in tls[("nodeA", "2")]["util"])  # idle
    mixed = tls[("nodeA", "3")]["util"]  # the job ended after 40% of 6 h
    assert mixed[0] > 0.9 and mixed[1] > 0.9 and mixed[3:] == [0.0, 0.0, 0.0]
    for g in out["gpus"]:
        assert 0 <= g["mean_util"] <= 1 and 0 <= g["idle_share"] <= 1 and 0 <= g["busy_share"] <= 1
    assert {"gpus", "mean_util", "gpu_hours_observed", "gpu_hours_busy", "cost", "idle_cost"} <= set(
        out["fleet"]
    )
    f = out["fleet"]
    assert f["gpus"] == 8
    assert f["cost"] == pytest.approx(f["gpu_hours_observed"] * 8, abs=0.01)
    idle_hours = sum(g["idle_share"] * g["observed_hours"] for g in out["gpus"])
    assert f["idle_cost"] == pytest.approx(idle_hours * 8, abs=0.05)
    assert f["starved_savings"] > 0 and f["rule_70"]["below"] is True
    assert [n["node"] for n in out["nodes"]] == ["nodeA", "nodeB"]


def test_node_price_divides_by_gpus_per_node(logs, capsys) -> None:
    a = _json(capsys, ["audit", str(logs.files[0]), "--price", "48/node-hour", "-o", "json"])
    assert a["fleet"]["price_per_gpu_hour"] == pytest.approx(8.0)  # six GPUs seen on nodeA


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_table_and_markdown(logs, capsys, lang: str) -> None:
    assert main(["audit", *map(str, logs.files), "--price", "8/gpu-hour", "--explain", "--lang", lang]) == 0
    table = capsys.readouterr().out
    assert ("starved" if lang == "en" else "数据饥饿") in table
    assert ("70%" in table) and "nodeA.csv:111" in table
    assert main(["audit", *map(str, logs.files), "-o", "markdown", "--lang", lang]) == 0
    md = capsys.readouterr().out
    assert md.startswith("# ") and "| nodeB | 1 |" in md


@pytest.mark.parametrize("mode", ["util", "busy"])
def test_demand_curve(logs, capsys, tmp_path: Path, mode: str) -> None:
    out_file = tmp_path / "demand.csv"
    out = _json(
        capsys,
        [
            "audit",
            *map(str, logs.files),
            "--demand-out",
            str(out_file),
            "--demand-mode",
            mode,
            "--gpu-type",
            "a100-80g",
            "-o",
            "json",
        ],
    )
    rows = list(csv.DictReader(out_file.open()))
    assert out["demand"]["rows"] == len(rows) > 0
    assert set(rows[0]) == {"time", "gpu", "gpus"}
    types = {r["gpu"] for r in rows}
    assert "a100-80g" in types and len(types) == 2  # nodeB's H100s are matched by name
    total = sum(float(r["gpus"]) for r in rows)  # GPU-hours
    if mode == "util":
        assert total == pytest.approx(out["fleet"]["gpu_hours_busy"], rel=1e-3)
    else:
        not_idle = sum((1 - g["idle_share"]) * g["observed_hours"] for g in out["gpus"])
        assert total == pytest.approx(not_idle, rel=1e-3)


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["audit"], "nothing to audit"),
        (["audit", "missing.csv"], "no such file"),
        (["audit", "{f}", "--price", "eight"], "expected a price"),
        (["audit", "{f}", "--price", "8/gpu-hour", "--offer", "x"], "not both"),
        (["audit", "--prometheus", "http://127.0.0.1:9", "--since", "yesterday"], "--since"),
    ],
)
def test_errors_exit_2(logs, capsys, argv: list[str], needle: str) -> None:
    argv = [a.replace("{f}", str(logs.files[0])) for a in argv]
    assert main(argv) == 2
    assert needle in capsys.readouterr().err


def test_subprocess(logs) -> None:
    exe = Path(sys.executable).parent / "gpuplan"
    proc = subprocess.run(
        [str(exe), "audit", str(logs.files[1]), "-o", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["fleet"]["gpus"] == 2


def test_offer_price_from_catalog(logs, capsys) -> None:
    pytest.importorskip("gpuplan.engines.pricing")
    out = _json(capsys, ["audit", str(logs.files[1]), "--offer", "aws-p5-h100", "-o", "json"])
    f = out["fleet"]
    assert f["price_per_gpu_hour"] > 0 and f["currency"]
    assert f["cost"] == pytest.approx(f["gpu_hours_observed"] * f["price_per_gpu_hour"], rel=1e-3)
    assert main(["audit", str(logs.files[1]), "--offer", "no-such-offer"]) == 2


def test_exactly_70_percent_counts_as_busy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # float32 holds 70 % as 0.6999999881; the busy rule is u >= 0.70 and must still hold
    log = tmp_path / "n1.csv"
    log.write_text("timestamp, index, utilization.gpu [%]\n" + "".join(
        f"2026/11/01 00:{m:02d}:00.000, 0, 70 %\n" for m in range(20)))
    assert main(["audit", str(log), "-o", "json"]) == 0
    gpu = json.loads(capsys.readouterr().out)["gpus"][0]
    assert gpu["busy_share"] == pytest.approx(1.0) and gpu["idle_share"] == 0


def test_audit_json_imports_only_what_it_runs(logs) -> None:
    """`audit FILE -o json` loads no renderer or message catalog it does not use, no advice engine, no
    scipy or jinja2 (issue 23: start-up is paid on every command)."""
    csvs = [str(f) for f in logs.files if f.suffix == ".csv"][:1]
    code = (
        "import sys, io, contextlib\nfrom gpuplan.cli import main\n"
        f"with contextlib.redirect_stdout(io.StringIO()):\n    rc = main(['audit', *{csvs!r}, '-o', 'json'])\n"
        "print(rc, ' '.join(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == "0"
    loaded = set(out[1:])
    unused = {"gpuplan.engines.advise", "gpuplan.render.audit", "gpuplan.render.html", "gpuplan.i18n",
              "scipy", "jinja2", "numba"}
    assert not loaded & unused
