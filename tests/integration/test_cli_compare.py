"""The compare command end to end, in process and as a real subprocess."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuplan.cli import main

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "examples" / "seed-910b.yaml"
GPUPLAN = [sys.executable, "-m", "gpuplan"]


def test_table_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(SEED)]) == 0
    out = capsys.readouterr().out
    assert "Verdict" in out and "ct-910b" in out and "Break-even" in out


def test_explain_shows_formulas(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(SEED), "--explain"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "E[max of 4 U(0, 0.125)]" in out and "min term" in out and "catalog defaults used" in out


def test_json_and_markdown_and_chinese(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(SEED), "-o", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["workloads"][0]["recommendation"]["offer"] == "ct-910b"
    assert main(["compare", str(SEED), "-o", "markdown", "--lang", "zh"]) == 0
    md = capsys.readouterr().out
    assert md.startswith("# gpuplan 比较") and "结论" in md


@pytest.mark.parametrize("tail", [["-o", "json"], ["--output=json", "--lang", "zh"], ["-o", "json", "--catalog"]])
def test_json_through_the_one_command_honours_explain(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      tail: list[str]) -> None:
    """Every compare line runs the one typer command (no second parser that could drop an option):
    `--explain` adds each option's formula lines to the JSON, and only it does."""
    if tail[-1] == "--catalog":  # a catalog that adds nothing
        (tmp_path / "empty.yaml").write_text("offers: []\n", encoding="utf-8")
        tail = [*tail, str(tmp_path / "empty.yaml")]
    plain_code, plain = main(["compare", str(SEED), *tail]), json.loads(capsys.readouterr().out)
    explained_code, explained = main(["compare", str(SEED), *tail, "--explain"]), json.loads(capsys.readouterr().out)
    assert plain_code == explained_code == 0
    options = [o for w in explained["workloads"] for o in w["options"]]
    assert options and all(o["explain"] for o in options)
    assert all("explain" not in o for w in plain["workloads"] for o in w["options"])
    for o in options:
        del o["explain"]
    assert explained == plain


def test_init_writes_a_scenario_that_compares(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "s.yaml"
    assert main(["init", str(target)]) == 0
    assert main(["compare", str(target), "-o", "json"]) == 0
    capsys.readouterr()
    assert main(["init", str(target)]) == 2  # no silent overwrite
    assert "--force" in capsys.readouterr().err


def test_catalog_lists(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "gpus", "-o", "json"]) == 0
    gpus = json.loads(capsys.readouterr().out)
    assert len(gpus) >= 12 and all(g["source"] and g["as_of"] for g in gpus)
    assert main(["catalog", "offers", "-o", "json"]) == 0
    offers = json.loads(capsys.readouterr().out)
    assert len(offers) >= 10 and all(o["source"] and o["as_of"] for o in offers)
    assert main(["catalog", "offers", "--gpu", "nope"]) == 2


def test_user_catalog_adds_offers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    extra = tmp_path / "quotes.yaml"
    extra.write_text("version: 1\noffers:\n  - {id: my-quote, gpu: h100-sxm, mode: bare-metal, currency: CNY,"
                     " price: {amount: 60000, per: node-month}, lease_unit: node,"
                     " source: sales e-mail, as_of: 2026-11}\n")
    assert main(["catalog", "offers", "--catalog", str(extra), "-o", "json"]) == 0
    assert "my-quote" in capsys.readouterr().out
    scen = tmp_path / "s.yaml"
    scen.write_text("version: 1\ncurrency: CNY\noffers:\n  - use: my-quote\n  - use: smm-h100-bare-metal\n"
                    "workloads:\n  - {id: w, kind: training, gpu: h100-sxm, gpus: 16, hours_per_day: 24,"
                    " duration: 60d}\n")
    assert main(["compare", str(scen), "--catalog", str(extra), "-o", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["workloads"][0]["recommendation"]["offer"] == "my-quote"


def test_subprocess_exit_codes(tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": "120"}
    ok = subprocess.run([*GPUPLAN, "compare", str(SEED), "-o", "json"], capture_output=True, text=True, env=env)
    assert ok.returncode == 0 and json.loads(ok.stdout)["schema"] == "gpuplan.compare/1"
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\ncurrency: CNY\noffers: []\nworkloads: []\n")
    res = subprocess.run([*GPUPLAN, "compare", str(bad)], capture_output=True, text=True, env=env)
    assert res.returncode == 2 and "bad.yaml" in res.stderr and "Traceback" not in res.stderr
    dbg = subprocess.run([*GPUPLAN, "--debug", "compare", str(bad)], capture_output=True, text=True, env=env)
    assert dbg.returncode != 0 and "Traceback" in dbg.stderr
    usage = subprocess.run([*GPUPLAN, "compare"], capture_output=True, text=True, env=env)
    assert usage.returncode == 2


def test_measured_needs_offer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    probe = tmp_path / "p.json"
    probe.write_text("{not json")
    assert main(["compare", str(SEED), "--measured", str(probe)]) == 2
    assert "p.json" in capsys.readouterr().err


def _many(n: int) -> str:
    lines = ["version: 1", "currency: USD", "offers:",
             "  - {id: bm, gpu: l4, mode: bare-metal, price: {amount: 1.5, per: gpu-hour}, min_term: 30d}",
             "  - {id: ct, gpu: l4, mode: container, price: {amount: 3.0, per: gpu-hour}}", "workloads:"]
    lines += [f"  - {{id: job-{i}, kind: training, gpu: l4, gpus: {1 + i % 8}, hours_per_day: {1 + i % 24}, "
              f"duration: 30d}}" for i in range(n)]
    return "\n".join(lines) + "\n"


def test_past_the_limit_a_summary_first_and_details_on_request(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuplan.render.compare import DETAILS_AT_MOST

    monkeypatch.setenv("COLUMNS", "100")
    path = tmp_path / "many.yaml"
    n = DETAILS_AT_MOST + 1
    path.write_text(_many(n), encoding="utf-8")
    assert main(["compare", str(path), "-o", "json"]) == 0
    verdicts = {w["id"]: w["recommendation"]["offer"] for w in json.loads(capsys.readouterr().out)["workloads"]}
    assert main(["compare", str(path)]) == 0
    summary = capsys.readouterr().out
    rows = [line.split("│")[1:4] for line in summary.splitlines() if line.startswith("│")]
    assert {r[0].strip(): r[2].strip() for r in rows} == verdicts  # one row a workload, its verdict
    assert "add --details" in " ".join(summary.split()) and "Break-even:" not in summary
    assert main(["compare", str(path), "--details"]) == 0
    details = capsys.readouterr().out
    assert details.startswith(summary.split("add --details")[0].rsplit("\n", 1)[0])  # the same summary first
    assert details.count("Break-even:") == n and "each workload's options, reasons and warnings follow" in details
    path.write_text(_many(DETAILS_AT_MOST), encoding="utf-8")
    assert main(["compare", str(path)]) == 0
    few = capsys.readouterr().out
    assert few.count("Break-even:") == DETAILS_AT_MOST and "--details" not in few


def test_a_fraction_of_a_card_is_stated_as_such(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`gpus: 0.5` is half a card in the JSON and the table (it was written as 1: the engine holds one card
    and a share of 0.5); whole cards stay whole numbers."""
    from gpuplan import api

    path = tmp_path / "half.yaml"
    path.write_text(
        "version: 1\ncurrency: USD\noffers:\n"
        "  - {id: ct, mode: container, gpu: h100-sxm, price: {amount: 2.0, per: gpu-hour}, sharing: mps}\n"
        "workloads:\n"
        "  - {id: half, kind: inference, gpu: h100-sxm, gpus: 0.5, hours_per_day: 24, duration: 30d}\n"
        "  - {id: whole, kind: inference, gpu: h100-sxm, gpus: 2, hours_per_day: 24, duration: 30d}\n",
        encoding="utf-8")
    assert main(["compare", str(path), "-o", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [w["gpus"] for w in printed["workloads"]] == [0.5, 2]
    assert isinstance(printed["workloads"][1]["gpus"], int)
    validated = api.compare(path).document("en").model_dump(mode="json", by_alias=True, exclude_unset=True)
    assert [w["gpus"] for w in validated["workloads"]] == [0.5, 2]
    assert main(["compare", str(path)]) == 0
    assert "0.5 × h100-sxm" in capsys.readouterr().out
