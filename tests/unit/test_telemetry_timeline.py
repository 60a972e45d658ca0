"""The audit's per-GPU timeline (the HTML report's heat map): hourly means over observed time, null
where nothing was observed (a gap is not idle), one shared start and length, wider bins for long spans."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplan.cli import main
from gpuplan.contracts.audit_document import to_json
from gpuplan.render.report_data import audit_heat
from gpuplan.telemetry import Collector, analyze, read_into
from gpuplan.telemetry.analyze import TIMELINE_BIN_HOURS, TIMELINE_MAX_BINS, timeline_bins

T0 = datetime(2024, 3, 4, 0, 0, 0)
HEAD = "timestamp, index, utilization.gpu [%], memory.used [MiB]"


def _ts(t: datetime) -> str:
    return t.strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]


def _busy_idle_missing(path: Path) -> Path:
    """GPU 0: busy (85/95 %) in hour 0, idle (0 %) in hour 1, no sample in hour 2.
    GPU 1: a steady 50 % over all three hours (so the fleet spans three hours). A sample every 10 s."""
    lines = [HEAD]
    for i in range(3 * 360):
        t = _ts(T0 + timedelta(seconds=10 * i))
        hour = i // 360
        if hour < 2:
            u = (85 if i % 2 else 95) if hour == 0 else 0
            lines.append(f"{t}, 0, {u} %, 1000 MiB")
        lines.append(f"{t}, 1, 50 %, 1000 MiB")
    path.write_text("\n".join(lines) + "\n")
    return path


def _audit(files: list[Path], stream: bool = True) -> dict:
    col = Collector(stream=stream)
    read_into(files, col)
    return to_json(analyze(col.finish()))


def test_busy_then_idle_then_missing_hour(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _busy_idle_missing(tmp_path / "n1.csv")
    assert main(["audit", str(log), "-o", "json"]) == 0
    out = capsys.readouterr().out
    gpus = json.loads(out)["gpus"]
    tl0, tl1 = gpus[0]["timeline"], gpus[1]["timeline"]
    assert tl0["start"] == tl1["start"] == "2024-03-04T00:00:00Z"
    assert tl0["step_s"] == tl1["step_s"] == 3600
    assert tl0["util"] == [pytest.approx(0.9, abs=0.005), pytest.approx(0.0, abs=0.005), None]
    assert tl1["util"] == [0.5, 0.5, 0.5]
    # Deterministic: a second run prints the same bytes.
    assert main(["audit", str(log), "-o", "json"]) == 0
    assert capsys.readouterr().out == out


def test_timeline_is_the_same_streamed_and_whole_frame(tmp_path: Path) -> None:
    log = _busy_idle_missing(tmp_path / "n1.csv")
    a, b = _audit([log]), _audit([log], stream=False)
    assert [g["timeline"] for g in a["gpus"]] == [g["timeline"] for g in b["gpus"]]
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_gpus_on_different_hours_share_start_and_length(tmp_path: Path) -> None:
    """Node a logs hours 0-1, node b hours 3-4 (60 s samples): both timelines run over hours 0..4."""
    for name, first in (("a", 0), ("b", 3)):
        lines = [HEAD] + [
            f"{_ts(T0 + timedelta(hours=first, minutes=m))}, 0, {20 if name == 'a' else 80} %, 1 MiB"
            for m in range(120)
        ]
        (tmp_path / f"{name}.csv").write_text("\n".join(lines) + "\n")
    out = _audit([tmp_path / "a.csv", tmp_path / "b.csv"])
    a, b = (g["timeline"] for g in out["gpus"])
    assert a["start"] == b["start"] == "2024-03-04T00:00:00Z"
    assert a["util"] == [0.2, 0.2, None, None, None]
    assert b["util"] == [None, None, None, 0.8, 0.8]


def test_long_span_takes_wider_bins(tmp_path: Path) -> None:
    """70 days of 30-minute samples (1,680 hours > 1,440): 2-hour bins, each the mean of its samples;
    a 3-day hole stays null. Intervals of 30 min are all longer than MIN_GAP_S (the resolved path)."""
    lines = [HEAD]
    for i in range(70 * 48):
        if 20 * 48 <= i < 23 * 48:
            continue
        u = 10 if (i // 4) % 2 == 0 else 60  # 2 h at 10 %, 2 h at 60 %
        lines.append(f"{_ts(T0 + timedelta(minutes=30 * i))}, 0, {u} %, 1 MiB")
    (tmp_path / "long.csv").write_text("\n".join(lines) + "\n")
    tl = _audit([tmp_path / "long.csv"])["gpus"][0]["timeline"]
    assert tl["step_s"] == 7200 and tl["start"] == "2024-03-04T00:00:00Z"
    assert len(tl["util"]) == 70 * 12
    assert tl["util"][:4] == [0.1, 0.6, 0.1, 0.6]
    assert tl["util"][20 * 12 : 23 * 12] == [None] * 36
    assert None not in tl["util"][: 20 * 12 - 1]


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 500_000), st.integers(0, 2_000_000))
def test_timeline_bins_cover_the_span_within_the_limit(first_h: int, span: int) -> None:
    last_h = first_h + span
    start, width, n = timeline_bins(first_h, last_h)
    assert n <= TIMELINE_MAX_BINS
    assert start <= first_h < start + width  # the first bin holds the first hour
    assert start + (n - 1) * width <= last_h < start + n * width  # the last bin holds the last hour
    if span < TIMELINE_MAX_BINS:
        assert (start, width) == (first_h, 1)  # hourly whenever hourly fits
    else:
        assert width in TIMELINE_BIN_HOURS or width % 168 == 0
    if 24 % width == 0:
        assert start % width == 0  # bins that divide a day start on UTC boundaries


def test_html_report_draws_the_timeline(tmp_path: Path) -> None:
    log = _busy_idle_missing(tmp_path / "n1.csv")
    html = tmp_path / "out.html"
    assert main(["audit", str(log), "--html", str(html)]) == 0
    page = html.read_text()
    assert "no per-GPU time series" not in page  # the single-column fallback's note
    heat_svg = page[page.index("<title>Utilisation per GPU over time</title>") :]
    heat_svg = heat_svg[: heat_svg.index("</svg>")]
    cells = re.findall(r'<rect x="[\d.]+" y="\d+" width="[\d.]+" height="15" fill="([^"]+)"/>', heat_svg)
    assert len(cells) == 6  # 2 GPUs x 3 hourly columns (one column before the timeline)
    assert cells[2] == "url(#gap)" and cells.count("url(#gap)") == 1  # GPU 0's missing hour: no data
    assert "03-04 00:00" in heat_svg and "03-04 02:00" in heat_svg  # columns are clock hours
    heat = audit_heat(_audit([log]))
    assert heat["timeline"] and [len(r) for r in heat["cells"]] == [3, 3]
    assert heat["cells"][0][2] is None and heat["step_s"] == 3600
