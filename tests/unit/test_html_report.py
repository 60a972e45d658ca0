"""The self-contained HTML reports: content, languages, locale formatting, no external references."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from web_inputs import HYBRID, SEED, cli_json, write_nvsmi, write_trace

from gpuplan import api
from gpuplan.cli import main
from gpuplan.render.compare import compare_json
from gpuplan.render.html import Fmt, render_report, write_report

EXTERNAL = re.compile(
    r"""(?:src|href)\s*=\s*["'](?!data:|#)|url\((?!#|data:)|@import|<script|<link(?![^>]*href="data:)""", re.I
)


@pytest.fixture(scope="module")
def seed() -> api.CompareResult:
    return api.compare(SEED, hours_curves=True)


def assert_self_contained(html: str) -> None:
    assert not EXTERNAL.search(html), EXTERNAL.search(html)
    # the only URL is the SVG namespace (an identifier, never fetched)
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", html))
    assert urls <= {"http://www.w3.org/2000/svg"}, urls
    assert "<style>" in html and "@media print" in html


def test_compare_report_en(seed: api.CompareResult) -> None:
    html = render_report("compare", seed, "en")
    assert_self_contained(html)
    data = compare_json(seed.document("en"))
    w0, w1 = data["workloads"]
    assert html.count('class="r-wide"') == 3 * len(data["workloads"])  # each chart drawn for desk and phone
    assert f'data-verdict="{w0["recommendation"]["offer"]}"' in html
    assert f'data-verdict="{w1["recommendation"]["offer"]}"' in html
    for reason in w0["recommendation"]["reasons"] + [d["reason"] for d in w0["recommendation"]["dimensions"].values()]:
        assert reason.replace("&", "&amp;") in html.replace("&#39;", "'")
    assert "CN¥31,080" in html  # Babel, en_US
    be = w0["break_even"]["hours_per_day"]
    assert f"break-even {be:.1f} h/day" in html
    assert "Assumptions and sources" in html and "seed article" in html and str(SEED) in html
    for o in seed.scenario.offers:  # the fields each offer took from defaults are listed
        assert ", ".join(o.defaults_used) in html
    assert "Performance stability" in html and "Scenario fit" in html


def test_compare_report_zh(seed: api.CompareResult) -> None:
    html = render_report("compare", seed, "zh")
    assert_self_contained(html)
    assert 'lang="zh-CN"' in html
    assert "¥31,080" in html and "CN¥" not in html  # zh_CN writes the yuan sign alone
    for label in ("对比报告", "四个维度", "假设与来源", "盈亏平衡", "钱花在哪里", "每天小时数"):
        assert label in html
    assert "Assumptions and sources" not in html


def test_fragment_is_only_main(seed: api.CompareResult) -> None:
    frag = render_report("compare", seed, "en", fragment=True)
    assert frag.lstrip().startswith("<main") and "<html" not in frag and "<style>" not in frag


def test_locale_formatting() -> None:
    en, zh = Fmt("en", "CNY"), Fmt("zh", "CNY")
    assert en.money(1234567.4) == "CN¥1,234,567" and zh.money(1234567.4) == "¥1,234,567"
    assert en.money(12.5) == "CN¥12.50" and en.money(0.0) == "CN¥0"
    assert Fmt("en", "USD").money(8.5) == "$8.50" and Fmt("zh", "USD").money(8.5) == "US$8.50"
    assert en.money_short(31000) == "CN¥31K" and zh.money_short(31000) == "¥3.1万"
    assert en.pct(0.734) == "73%" and en.num(1234.56, 1) == "1,234.6" and en.money(None) == "—"


def test_write_report_and_cli_html(tmp_path: Path, capsys: pytest.CaptureFixture[str], seed: api.CompareResult) -> None:
    p = tmp_path / "r.html"
    write_report("compare", seed, p, "zh")
    assert p.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    out = tmp_path / "cli.html"
    assert main(["compare", str(SEED), "--html", str(out), "--lang", "en", "-o", "json"]) == 0
    assert "data-verdict" in out.read_text(encoding="utf-8")
    assert main(["compare", str(SEED), "--html", str(tmp_path / "no" / "dir.html")]) == 2
    assert "--html" in capsys.readouterr().err


def test_unknown_kind_or_language(seed: api.CompareResult) -> None:
    with pytest.raises(ValueError):
        render_report("nope", seed, "en")
    with pytest.raises(ValueError):
        render_report("compare", seed, "fr")
    with pytest.raises(TypeError):
        render_report("compare", {"schema": "gpuplan.compare/1"}, "en")


def test_plan_report_from_the_plan_json(capsys: pytest.CaptureFixture[str]) -> None:
    d = cli_json(capsys, "plan", str(HYBRID))
    for lang, words in (("en", ("Hybrid pool plan", "optimum R = 4", "What runs where")),
                        ("zh", ("混合资源池规划", "最优 R = 4", "任务放在哪里"))):
        html = render_report("plan", d, lang)
        assert_self_contained(html)
        for w in words:
            assert w in html
        assert html.count("<svg") >= 3
    assert "CN¥25,501" in render_report("plan", d, "en")  # 25,500 + 0.98 of re-run work (test_plan.py)


def test_simulate_report_from_the_simulate_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = write_trace(tmp_path / "t.csv")
    d = cli_json(capsys, "simulate", str(trace), "--reserved", "0:16:4", "--wait", "1h", "--scenario", str(HYBRID))
    assert d["schema"] == "gpuplan.simulate/1" and len(d["runs"]) == 5
    html = render_report("simulate", d, "en")
    assert_self_contained(html)
    assert html.count('class="r-wide"') == 3 and "Cost against reserved GPUs R" in html and "R=16" in html
    one = cli_json(capsys, "simulate", str(trace), "--reserved", "4")
    html1 = render_report("simulate", one, "zh")  # unpriced, one object: a wait chart, no cost chart
    assert "平均等待" in html1 and html1.count('class="r-wide"') == 1


def test_audit_report_from_the_audit_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = write_nvsmi(tmp_path / "node1.csv")
    d = cli_json(capsys, "audit", str(log), "--price", "8/gpu-hour", "--currency", "CNY")
    html = render_report("audit", d, "en")
    assert_self_contained(html)
    assert "GPU utilisation audit" in html and "node1/0" in html and "Where the money went" in html
    assert "CN¥" in html and html.count("<svg") >= 3
    zh = render_report("audit", d, "zh")
    assert "GPU 利用率审计" in zh and "闲置" in zh
