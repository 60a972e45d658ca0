"""`gpuplan schema NAME` end to end, and every `-o json` output and JSON golden validated against the
schema the command prints (with jsonschema, as a consumer of the contract would)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from gpuplan.cli import main

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "unit"))
from schema_nodes import object_nodes  # noqa: E402
from telemetry_truth import write_logs  # noqa: E402
from web_inputs import HYBRID, write_nvsmi, write_trace  # noqa: E402

NAMES = ("compare", "plan", "simulate", "audit", "probe")
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
TRACE = "traces/alibaba-gpu-v2023/openb_pod_list_default.csv"


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    capsys.readouterr()
    rc = main(list(argv))
    out = capsys.readouterr()
    assert rc == 0, out.err
    return json.loads(out.out)


@pytest.fixture(scope="module")
def schemas() -> dict[str, dict[str, Any]]:
    """What `gpuplan schema NAME` prints, per name (through the real entry point, once)."""
    exe = Path(sys.executable).with_name("gpuplan")
    out = {}
    for name in NAMES:
        proc = subprocess.run(
            [str(exe), "schema", name], capture_output=True, text=True, timeout=60, cwd=ROOT, check=False
        )
        assert proc.returncode == 0, proc.stderr
        out[name] = json.loads(proc.stdout)
    return out


def check(schema: dict[str, Any], data: Any) -> None:
    errors = [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in jsonschema.Draft202012Validator(schema).iter_errors(data)
    ]
    assert not errors, errors[:5]


@pytest.mark.parametrize("name", NAMES)
def test_schema_prints_a_valid_2020_12_schema(name: str, schemas: dict[str, dict[str, Any]]) -> None:
    schema = schemas[name]
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].endswith(f"/gpuplan.{name}/1.json") and schema["title"] == f"gpuplan.{name}/1"
    found = list(object_nodes(schema))
    assert found and all("properties" in n and "required" in n for _, n in found), [
        p for p, n in found if "properties" not in n or "required" not in n
    ]


def test_unknown_name_exit_2_with_hint(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "plans"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "unknown schema 'plans'" in err and "compare, plan, simulate, audit, probe" in err and "Hint:" in err
    assert main(["schema"]) == 2  # NAME is required


def test_schema_command_imports_no_engine() -> None:
    code = (
        "import sys; from gpuplan.cli import main; import contextlib, io\n"
        "with contextlib.redirect_stdout(io.StringIO()): main(['schema', 'audit'])\n"
        "print(','.join(m for m in ('numba', 'polars', 'numpy') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.strip() == ""


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_compare_and_plan_of_every_example_validate(
    example: Path, schemas: dict[str, dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    for lang in ("en", "zh"):
        check(schemas["compare"], run_json(capsys, "compare", str(example), "-o", "json", "--lang", lang))
        check(schemas["plan"], run_json(capsys, "plan", str(example), "-o", "json", "--lang", lang))


def test_plan_strict_fifo_validates(schemas: dict[str, dict[str, Any]], capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "plan", str(HYBRID), "--queueing", "strict-fifo", "-o", "json")
    check(schemas["plan"], data)
    assert data["queueing"] == "strict-fifo"


def test_simulate_on_the_shared_trace_validates(
    shared_dir: Path, schemas: dict[str, dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    trace = str(shared_dir / TRACE)
    one = run_json(capsys, "simulate", trace, "-r", "8", "-s", str(HYBRID), "-o", "json")
    assert one["schema"] == "gpuplan.simulate/1" and one["runs"][0]["cost"] is not None
    check(schemas["simulate"], one)
    several = run_json(capsys, "simulate", trace, "-r", "0,8", "-s", str(HYBRID), "--max-wait", "p95=2h", "-o", "json")
    assert len(several["runs"]) == 2
    check(schemas["simulate"], several)
    unpriced = run_json(capsys, "simulate", trace, "-r", "0:16:8", "--packing", "node", "-o", "json")
    assert all(r["cost"] is None for r in unpriced["runs"]) and unpriced["recommended"] is None
    check(schemas["simulate"], unpriced)
    assert not jsonschema.Draft202012Validator(schemas["simulate"]).is_valid(unpriced["runs"])  # the old list


def test_simulate_small_trace_validates(
    tmp_path: Path, schemas: dict[str, dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    trace = str(write_trace(tmp_path / "t.csv"))
    check(
        schemas["simulate"],
        run_json(capsys, "simulate", trace, "-r", "0:16:4", "-w", "1h", "-s", str(HYBRID), "-o", "json"),
    )
    check(schemas["simulate"], run_json(capsys, "simulate", trace, "-r", "4", "-w", "inf", "-o", "json"))


def test_audit_of_the_fixtures_validates(
    tmp_path: Path, schemas: dict[str, dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    logs = write_logs(tmp_path)
    files = [str(f) for f in logs.files]
    docs = [
        run_json(capsys, "audit", *files, "--price", "8/gpu-hour", "-o", "json"),
        run_json(capsys, "audit", *files, "--demand-out", str(tmp_path / "d.csv"), "-o", "json"),
        run_json(capsys, "audit", files[1], "--offer", "aws-p5-h100", "-o", "json"),
        run_json(capsys, "audit", str(write_nvsmi(tmp_path / "n1.csv")), "-o", "json"),
    ]
    for doc in docs:
        check(schemas["audit"], doc)
    assert docs[0]["input"]["bad_by_kind"] and docs[1]["demand"]["rows"] > 0 and docs[3]["fleet"]["cost"] is None


def test_probe_without_gpu_validates(tmp_path: Path, schemas: dict[str, dict[str, Any]]) -> None:
    exe = Path(sys.executable).with_name("gpuplan")
    for args in (["probe", "-o", "json"], ["probe", "--bench", "-o", "json", "--lang", "zh"]):
        proc = subprocess.run(
            [str(exe), *args],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
            env={**os.environ, "COLUMNS": "120"},
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        check(schemas["probe"], json.loads(proc.stdout))


GOLDENS = sorted((ROOT / "tests" / "golden").rglob("*.json"))


@pytest.mark.parametrize("path", GOLDENS, ids=lambda p: str(p.relative_to(ROOT / "tests" / "golden")))
def test_every_json_golden_validates(path: Path, schemas: dict[str, dict[str, Any]]) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    name = data["schema"].removeprefix("gpuplan.").removesuffix("/1")
    assert name in NAMES, f"{path}: schema {data['schema']!r} has no contract"
    check(schemas[name], data)


def test_goldens_cover_compare_and_the_export_plan() -> None:
    kinds = {json.loads(p.read_text(encoding="utf-8"))["schema"] for p in GOLDENS}
    assert {"gpuplan.compare/1", "gpuplan.plan/1"} <= kinds
