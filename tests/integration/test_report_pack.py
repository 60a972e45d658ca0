"""`gpuplan report`: the decision pack (issue 29). The answer first, then the sections with their ids,
every amount with its currency, en and zh, nothing loaded from outside, and markdown.

The money is checked against hand arithmetic from the seed article's figures (examples/seed-hybrid.yaml):
4 leased cards × 200 CNY/card-day × 30 days = 24,000 + 150 container card-hours × 10 CNY = 1,500, so
25,500 CNY a month and 306,000 over 12 months; all bare metal: a 6-card peak × 200 × 30 = 36,000 a month,
432,000 over 12, plus the lease overtime of its re-run work after interruptions (s_b - 1 = 0.000474 / 48 x
(4 x 2,880 + 2 x 150) / 3,030 = 3.85e-5, x 3,030 GPU-hours x 200 / 24 CNY = 0.97 a month, 11.7 over 12);
all containers: (4 × 24 + 2 × 2.5) GPU-h × 30 days × 10 CNY = 30,300 a month, 363,600."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuplan.cli import load_app

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "examples" / "seed-hybrid.yaml"
TELEMETRY = ROOT / "tests" / "fixtures" / "telemetry" / "llm-job-monitor.csv"
runner = CliRunner()


def _report(*args: str) -> str:
    res = runner.invoke(load_app(["report"]), ["report", *args])
    assert res.exit_code == 0, res.output
    return res.output


@pytest.fixture(scope="module")
def pack_en(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("pack") / "pack.html"
    _report(str(SEED), "--paths", "500", "--html", str(out))
    return out.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def pack_zh_audit(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("pack") / "pack-zh.html"
    _report(str(SEED), "--paths", "500", "--lang", "zh", "--audit", str(TELEMETRY), "--html", str(out))
    return out.read_text(encoding="utf-8")


def _section_ids(html: str) -> list[str]:
    return re.findall(r'<section[^>]*\bid="([a-z]+)"', html)


def test_sections_in_order_the_answer_first(pack_en: str, pack_zh_audit: str) -> None:
    assert _section_ids(pack_en) == ["answer", "compare", "plan", "commit", "vendors", "assumptions"]
    assert _section_ids(pack_zh_audit) == ["answer", "compare", "plan", "commit", "vendors", "audit", "assumptions"]
    assert pack_en.count("<main") == 1 and pack_en.count("<!DOCTYPE html>") == 1


def test_the_answer_lease_rent_sign_buy(pack_en: str) -> None:
    answer = pack_en[pack_en.index('id="answer"'):pack_en.index('id="compare"')]
    assert "4 × ascend-910b at bm-910b" in answer  # lease: the plan's pool
    assert "ascend-910b containers at ct-910b for experiments" in answer  # rent
    assert "on 1-month terms, months 0–11, signed 12 time(s)" in answer  # sign: the commit's ladder
    assert "no owned offers" in answer  # buy: the hook for `mode: owned`


def _money_cells(html: str) -> dict[str, str]:
    rows = re.findall(r'<tr[^>]*data-strategy="([a-z_]+)"><td>[^<]*</td><td class="num">([^<]*)</td>', html)
    return dict(rows)


def _amount(text: str) -> float:
    return float(re.sub(r"[^0-9.]", "", text))


def test_money_over_12_months_against_hand_arithmetic(pack_en: str) -> None:
    cells = _money_cells(pack_en)
    # commit's ladder: plan's pool every month, its lease overtime included (s_b - 1 = 0.000474 / 48 x (4 x 2,880
    # + 2 x 150) / 3,030 of re-run work on 2,880 card-hours a month at 200 / 24 CNY: 0.92 CNY a month, issue 24)
    assert _amount(cells["recommended"]) == pytest.approx(306_000 + 12 * 0.92, abs=2)
    assert _amount(cells["all_bare_metal"]) == pytest.approx(432_000 + 11.7, abs=2)
    assert _amount(cells["all_container"]) == pytest.approx(363_600, rel=1e-3)


def test_every_amount_has_its_currency(pack_en: str, pack_zh_audit: str) -> None:
    for html, sym in ((pack_en, "CN¥"), (pack_zh_audit, "¥")):
        answer = html[html.index('id="answer"'):html.index('id="compare"')]
        commit = html[html.index('id="commit"'):html.index('id="vendors"')]
        cells = re.findall(r'<td class="num">([^<]*)</td>', answer + commit)
        money = [c for c in cells if re.search(r"\d", c) and "×" not in c and not c.strip().isdigit()]
        assert len(money) >= 12
        assert all(sym in c for c in money), [c for c in money if sym not in c]
        # the compare table's money columns (total .. idle) too
        for row in re.findall(r"<tr class=\"[^\"]*\">\s*<td>.*?</tr>", html[html.index('id="compare"'):], re.S)[:4]:
            nums = re.findall(r'<td class="num">([^<]*)</td>', row)
            assert all(sym in n for n in nums[:6]), nums


def test_zh(pack_zh_audit: str) -> None:
    assert '<html lang="zh-CN">' in pack_zh_audit
    for words in ("决策报告", "结论", "租用", "签约", "未来 12 个月的费用"):
        assert words in pack_zh_audit


def test_nothing_loaded_from_outside(pack_en: str, pack_zh_audit: str) -> None:
    for html in (pack_en, pack_zh_audit):
        assert not re.search(r"""\bsrc\s*=\s*["']?(https?:)?//""", html, re.I)
        assert not re.search(r"""<link[^>]*href\s*=\s*["']?(https?:)?//""", html, re.I)
        assert not re.search(r"""@import|url\(\s*["']?(https?:)?//""", html, re.I)
        assert "<script" not in html
        assert "default-src 'none'" in html  # and the page's CSP refuses any load it might grow


def test_print_styles_paginate_on_a4(pack_en: str) -> None:
    assert "@page" in pack_en and "A4" in pack_en
    assert re.search(r"\.pack-section[^{]*\{[^}]*break-before:\s*page", pack_en)


def test_exchange_rates_with_date_and_source(tmp_path: Path) -> None:
    scen = tmp_path / "fx.yaml"
    scen.write_text("""version: 1
currency: CNY
fx: {USD: 7.1, as_of: 2026-11-01}
offers:
  - use: aws-p5-h100
  - use: smm-h100-bare-metal
workloads:
  - {id: w, kind: training, gpu: H100, gpus: 8, hours_per_day: 8, duration: 30d}
""", encoding="utf-8")
    out = tmp_path / "pack.html"
    _report(str(scen), "--paths", "200", "--html", str(out))
    html = out.read_text(encoding="utf-8")
    answer = html[html.index('id="answer"'):html.index('id="compare"')]
    assert "7.1 CNY/USD (scenario fx, as of 2026-11-01)" in answer
    assert "aws-p5-h100" in answer


def test_markdown(tmp_path: Path) -> None:
    md = _report(str(SEED), "--paths", "500", "-o", "markdown")
    assert md.startswith("# Decision pack")
    for anchor in ("compare", "plan", "commit", "vendors"):
        assert f'<a id="{anchor}"></a>' in md
    assert '<a id="audit"></a>' not in md
    assert "| All bare metal | CN¥432,012 |" in md
    md = _report(str(SEED), "--paths", "500", "-o", "markdown", "--audit", str(TELEMETRY), "--lang", "zh")
    assert '<a id="audit"></a>' in md and "# 决策报告" in md


def test_bad_inputs_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from gpuplan.cli import main

    assert main(["report", str(SEED), "--quotes", "q.csv", "--db", "sqlite://"]) == 2
    assert "--quotes or --db" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "missing.yaml")]) == 2
    assert main(["report", str(SEED), "--audit", str(tmp_path / "none.csv")]) == 2


def test_a_spot_tier_is_in_the_answer() -> None:
    out = _report(str(ROOT / "examples" / "spot-tiers.yaml"), "--paths", "200")
    assert "**Rent**: h100-sxm spot capacity at aws-p5-h100-spot for sweeps (reclaimable)" in out
