"""`compare ... -o json` without typer (`cli.compare_fast`): the same text as the full command, or None
so that the full command runs (help, other outputs and options, GPUPLAN_CATALOG, bad input)."""

import subprocess
import sys
from pathlib import Path

import pytest

from gpuplan.cli import main
from gpuplan.cli.compare_fast import parse, run_compare

ROOT = Path(__file__).resolve().parents[2]
SEED = str(ROOT / "examples" / "seed-910b.yaml")
SITES = str(ROOT / "examples" / "sites-data.yaml")


@pytest.mark.parametrize("args", [
    [SEED, "-o", "json"], ["-o", "json", SEED], [SEED, "--output=json", "--lang", "zh"],
    [SITES, "-o", "json", "--explain"],
    [SITES, "--explain", "--lang=zh", "-o", "json"], [SEED, "-o", "json", "--catalog", "CATALOG"],
])
def test_the_same_json_as_the_full_command(args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPUPLAN_CATALOG", raising=False)
    if "CATALOG" in args:
        extra = tmp_path / "quotes.yaml"
        extra.write_text("version: 1\noffers:\n  - {id: my-quote, gpu: h100-sxm, mode: bare-metal, currency: CNY,"
                         " price: {amount: 30, per: gpu-hour}, source: a quote, as_of: 2026-11-01}\n")
        args = [str(extra) if a == "CATALOG" else a for a in args]
    assert main(["compare", *args]) == 0
    full = capsys.readouterr().out
    assert run_compare(args) == 0
    assert capsys.readouterr().out == full


@pytest.mark.parametrize("args", [
    ["--help"], [SEED], [SEED, "-o", "table"], [SEED, "-o", "markdown"], [SEED, "-o", "json", "--html", "r.html"],
    ["-o", "json"], [SEED, SEED, "-o", "json"], [SEED, "-o", "json", "--lang", "fr"], [SEED, "-ojson"],
    [SEED, "-o", "json", "--explain", "--explain"], [SEED, "-o", "json", "--measured", "m.json"],
    [SEED, "-o", "json", "--catalog"], [SEED, "-o", "json", "--catalog="], [SEED, "-o", "json", "--bogus", "1"],
    [SEED, "-o", "json", "--lang", "en", "--lang", "zh"], ["--", SEED, "-o", "json"],
])
def test_anything_else_goes_to_the_full_command(args: list[str]) -> None:
    assert parse(args) is None
    assert run_compare(args) is None


def test_bad_input_and_the_catalog_variable_go_to_the_full_command(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPUPLAN_CATALOG", raising=False)
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\ncurrency: CNY\noffers: []\nworkloads: []\n")
    assert run_compare([str(bad), "-o", "json"]) is None
    assert run_compare([str(tmp_path / "missing.yaml"), "-o", "json"]) is None
    assert capsys.readouterr().out == ""
    assert main(["compare", str(bad), "-o", "json"]) == 2
    monkeypatch.setenv("GPUPLAN_CATALOG", str(tmp_path / "none.yaml"))
    assert run_compare([SEED, "-o", "json"]) is None


def test_typer_is_not_imported() -> None:
    code = ("import sys; from gpuplan.cli.compare_fast import run_compare; "
            f"assert run_compare([{SEED!r}, '-o', 'json']) == 0; "
            "sys.stderr.write(' '.join(m for m in ('typer', 'click', 'rich') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr == "" and out.stdout.startswith("{")
