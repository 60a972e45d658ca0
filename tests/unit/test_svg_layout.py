"""Chart layout rules of issue 29: no impossible axis values, labels that never run into each other,
and the phone drawing's text at least 11 px."""

from __future__ import annotations

import re

from gpuplan.render import svg
from gpuplan.render.html import MIN_PHONE_FONT, NARROW, _pair


def test_a_flat_zero_series_draws_0_to_1_not_minus_1() -> None:
    ticks = svg.nice_ticks(0.0, 0.0)
    assert ticks[0] == 0.0 and ticks[-1] >= 1.0 and min(ticks) >= 0
    assert min(svg.nice_ticks(5.0, 5.0)) >= 0  # a flat positive series stays positive
    assert min(svg.nice_ticks(-2.0, -2.0)) < -2.0  # negative values may go below (they are real)
    chart = svg.line_chart(svg.Chart(title="wait", x_label="R", y_label="h", lines=[
        svg.Line("mean wait", [(1, 0.0), (2, 0.0), (3, 0.0)])]))
    assert ">-1<" not in chart and "−1" not in chart


def _texts(chart: str) -> list[str]:
    return re.findall(r"<text[^>]*>(?:<title>[^<]*</title>)?([^<]*)</text>", chart)


def test_bar_labels_never_run_into_each_other() -> None:
    names = ["aws-p5-h100", "lambda-h100-sxm", "coreweave-h100-hgx", "smm-h100-bare-metal"]
    chart = svg.stacked_bars("cost", names, [svg.Stack("rental", "#000", [1.0, 2.0, 3.0, 4.0])], "CNY",
                             width=NARROW)
    slot = (NARROW - 78 - 18) / len(names)
    shown = [t for t in _texts(chart) if t.rstrip("…") and any(n.startswith(t.rstrip("…")) for n in names)]
    assert len(shown) == len(names)
    assert all(svg.text_width(t) <= slot - 6 for t in shown), shown
    assert any(t.endswith("…") for t in shown) and "<title>coreweave-h100-hgx</title>" in chart


def test_x_tick_labels_that_would_touch_are_left_out() -> None:
    chart = svg.line_chart(svg.Chart(title="t", x_label="x", y_label="y", width=NARROW,
                                     x_fmt=lambda v: f"{v:,.0f} h",
                                     x_ticks=tuple(float(x) for x in range(0, 2400, 100)),
                                     lines=[svg.Line("a", [(0, 1), (2300, 2)])]))
    labels = [(float(x), lab) for x, lab in re.findall(
        r'<text x="([0-9.]+)" y="[0-9.]+" text-anchor="middle" fill="#555">([^<]*h)</text>', chart)]
    assert 2 <= len(labels) < 24
    for (xa, a), (xb, b) in zip(labels, labels[1:], strict=False):
        assert (xb - svg.text_width(b) / 2) - (xa + svg.text_width(a) / 2) >= 4, (a, b)


def test_hbars_fit_a_phone() -> None:
    chart = svg.hbars("t", [("Hybrid (leased pool + containers)", 1.0, "#000", "CN¥25,500")], "CNY", width=NARROW)
    assert all(float(x) >= 0 for x in re.findall(r'<rect x="([-0-9.]+)"', chart))
    assert all(float(w) > 0 for w in re.findall(r'<rect x="[0-9.]+" y="[0-9.]+" width="([-0-9.]+)"', chart))


def test_the_phone_drawing_has_no_font_under_11px() -> None:
    wide = svg.line_chart(svg.Chart(title="t", x_label="x", y_label="y", lines=[
        svg.Line("a", [(0, 1), (1, 2)], dots=True, point_labels=["R=1", "R=2"])]))
    assert 'font-size="10"' in wide
    pair = str(_pair(wide, wide))
    narrow = pair[pair.index('class="r-narrow"'):]
    assert min(float(s) for s in re.findall(r'font-size="([0-9.]+)"', narrow)) >= MIN_PHONE_FONT
