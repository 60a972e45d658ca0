"""`gpuplan commit` on the command line: JSON against its schema, seeds, HTML, markdown, Chinese, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from gpuplan.cli import main
from gpuplan.contracts import json_schema

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "examples" / "seed-910b.yaml"
QUOTES = ROOT / "examples" / "seed-910b-quotes.csv"

LADDER = """version: 1
currency: CNY
offers:
  - id: bm
    gpu: ascend-910b
    mode: bare-metal
    price: {amount: 240, per: gpu-day}
    terms:
      - {length: 1mo, price: {amount: 240, per: gpu-day}}
      - {length: 6mo, price: {amount: 200, per: gpu-day}}
      - {length: 12mo, price: {amount: 180, per: gpu-day}, early_exit: 0.5}
  - {id: ct, gpu: ascend-910b, mode: container, price: {amount: 10, per: gpu-hour}}
workloads:
  - {id: core, kind: training, gpu: ascend-910b, gpus: 8, hours_per_day: 24, duration: 30d}
  - {id: exp, kind: experiment, gpu: ascend-910b, gpus: 4, hours_per_day: 6, duration: 30d}
market:
  horizon: 12mo
  container_price_drift: [-0.35, -0.10]
  bare_metal_price_drift: [-0.25, 0.0]
  demand_growth: [0.0, 0.08]
"""


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def ladder_file(tmp_path: Path) -> Path:
    p = tmp_path / "ladder.yaml"
    p.write_text(LADDER, encoding="utf-8")
    return p


def test_json_matches_its_schema_and_the_seed_reproduces_it(ladder_file: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    args = ["commit", str(ladder_file), "--paths", "3000", "--seed", "5", "-o", "json"]
    code, a, _ = run(args, capsys)
    assert code == 0
    _, b, _ = run(args, capsys)
    assert a == b
    doc = json.loads(a)
    jsonschema.validate(doc, json_schema("commit"))
    assert list(doc) == ["schema", "currency", "horizon_months", "paths", "seed", "ladders", "cost", "against",
                         "regret", "bands", "reasons"]
    assert set(doc["against"]["single_term"]) == {"1", "6", "12"}
    assert doc["ladders"] and all(x["start_month"] + x["term_months"] <= 12 for x in doc["ladders"])
    for c in (doc["cost"], *doc["against"]["single_term"].values(), doc["against"]["all_container"]):
        assert c["p10"] <= c["p50"] <= c["p90"]
    assert doc["cost"]["expected"] <= min(c["expected"] for c in doc["against"]["single_term"].values()) + 1e-6
    _, other, _ = run(["commit", str(ladder_file), "--paths", "3000", "--seed", "6", "-o", "json"], capsys)
    assert json.loads(other)["cost"] != doc["cost"]
    assert any("a year" in r and "term" in r for r in doc["reasons"])


def test_schema_command_knows_commit(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["schema", "commit"], capsys)
    assert code == 0 and json.loads(out)["title"] == "gpuplan.commit/1"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_html_has_the_fan_chart_and_the_timeline(ladder_file: Path, tmp_path: Path, lang: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / f"commit-{lang}.html"
    code, table, _ = run(["commit", str(ladder_file), "--paths", "500", "--html", str(out), "--lang", lang], capsys)
    assert code == 0
    html = out.read_text(encoding="utf-8")
    assert html.count('class="r-wide"') == 4 and "p10–p90" in html  # cost fan, ladder, and a price band per tier
    assert ("租期阶梯" if lang == "zh" else "Ladder") in html and ("租期阶梯" if lang == "zh" else "Ladder") in table


def test_markdown_and_explain(ladder_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, md, _ = run(["commit", str(ladder_file), "--paths", "200", "-o", "markdown"], capsys)
    assert code == 0 and md.startswith("# gpuplan commit") and "| ★ ladder |" in md
    code, text, _ = run(["commit", str(ladder_file), "--paths", "200", "--explain"], capsys)
    assert code == 0 and "mixed-integer program" in text and "early exit 50%" in text


def test_the_readme_example_with_its_quote_history(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["commit", str(SEED), "--quotes", str(QUOTES), "-o", "json", "--paths", "1000"], capsys)
    assert code == 0
    assert any("quote history" in r for r in json.loads(out)["reasons"])


@pytest.mark.parametrize(("edit", "needle"), [
    (("horizon: 12mo", "horizon: 6mo"), "offers[0].terms[2].length"),
    (("early_exit: 0.5", "early_exit: 1.5"), "early_exit"),
    (("[-0.35, -0.10]", "[-1.5, -0.10]"), "container_price_drift"),
    (("demand_growth: [0.0, 0.08]", "demand_growth: [0.0, -1.0]"), "demand_growth"),
])
def test_bad_input_is_exit_2_and_names_the_field(ladder_file: Path, edit: tuple[str, str], needle: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    ladder_file.write_text(LADDER.replace(*edit), encoding="utf-8")
    html = ladder_file.with_suffix(".html")
    code, out, err = run(["commit", str(ladder_file), "--html", str(html)], capsys)
    assert code == 2 and needle in err and "Traceback" not in err
    assert not html.exists() and out == ""


def test_bad_paths_and_an_unreachable_quote_database_are_exit_2(ladder_file: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["commit", str(ladder_file), "--paths", "0"], capsys)[0] == 2
    code, _, err = run(["commit", str(ladder_file), "--db", "postgresql://u:pw@127.0.0.1:1/x"], capsys)
    assert code == 2 and "cannot use the quotes database" in err and "pw@" not in err
