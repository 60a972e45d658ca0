"""Real-world telemetry: single-GPU nvidia-smi logs, Unix timestamps, nounits, dcgm-exporter text
scrapes (fixtures in tests/fixtures/telemetry, their origin in its README), and all-bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuplan.cli import main
from gpuplan.errors import TelemetryError
from gpuplan.telemetry import Collector, analyze, read_into
from gpuplan.telemetry.promtext import marker_time

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "telemetry"


def _audit(*paths: Path):
    col = Collector()
    read_into(list(paths), col)
    return analyze(col.finish())


def test_single_gpu_log_without_index_is_one_gpu() -> None:
    res = _audit(FIX / "saga-monitor.csv")
    assert [(g.node, g.gpu, g.samples) for g in res.gpus] == [("saga-monitor", "0", 4)]
    # 1 s samples: 0 %, then 82 % three times; each sample stands for the interval after it (the last
    # one for the median interval), so the mean is 3 x 0.82 / 4 up to the ms jitter of the timestamps.
    assert res.gpus[0].mean_util == pytest.approx(0.615, abs=0.002)
    assert res.bad_rows == 0


def test_second_single_gpu_log() -> None:
    res = _audit(FIX / "llm-job-monitor.csv")
    g = res.gpus[0]
    assert (g.gpu, g.samples, res.bad_rows) == ("0", 8, 0)
    assert g.mean_util == pytest.approx((100 + 88 + 0 + 35 + 35 + 36 + 38 + 33) / 800, abs=0.003)
    assert g.observed_hours * 3600 == pytest.approx(8.0, abs=0.01)


def test_gpus_by_bus_id_with_units() -> None:
    res = _audit(FIX / "omniopt-a100-bus-id.csv")
    assert [g.gpu for g in res.gpus] == ["00000000:0B:00.0", "00000000:3B:00.0", "00000000:8B:00.0"]
    assert {g.model for g in res.gpus} == {"NVIDIA A100-SXM4-40GB"}
    assert [g.samples for g in res.gpus] == [2, 3, 3]
    assert all(g.interval_s == pytest.approx(10.1, abs=0.1) for g in res.gpus)


def test_unix_seconds_nounits() -> None:
    res = _audit(FIX / "gen-unix-seconds-nounits.csv")
    g = res.gpus[0]
    assert (g.gpu, g.samples, res.bad_rows) == ("0", 120, 0)
    assert g.first_ms == 1717234000 * 1000 and g.last_ms == (1717234000 + 5 * 119) * 1000
    assert g.interval_s == 5.0
    assert g.mean_util == pytest.approx(0.49)  # 10 samples at 95 %, 10 at 3 %, repeated


def test_unix_milliseconds_by_uuid() -> None:
    res = _audit(FIX / "gen-unix-ms.csv")
    g = res.gpus[0]
    assert g.gpu.startswith("GPU-5f6c2a34") and g.samples == 60
    assert g.first_ms == 1717234000 * 1000 + 123
    assert g.interval_s == 10.0


def test_index_log_with_unix_time_and_nounits(tmp_path: Path) -> None:
    """The compiled parser's layout (GPU by index) with values it does not take: same answer."""
    lines = ["timestamp, index, utilization.gpu [%], memory.used [MiB]"]
    for i in range(100):
        for gpu in (0, 1):
            lines.append(f"{1700000000 + 10 * i}, {gpu}, {90 if gpu == 0 else 10}, 4000")
    p = tmp_path / "n1.csv"
    p.write_text("\n".join(lines) + "\n")
    res = _audit(p)
    assert [(g.gpu, g.samples, round(g.mean_util, 3)) for g in res.gpus] == [("0", 100, 0.9), ("1", 100, 0.1)]
    assert res.bad_rows == 0


def test_dcgm_text_scrape_real_snapshot() -> None:
    res = _audit(FIX / "dcgm-l4-scrape.txt")
    assert [(g.node, g.gpu, g.model, g.samples) for g in res.gpus] == [
        ("i-030791dc5a37cd257", "0", "NVIDIA L4", 2)
    ]
    g = res.gpus[0]
    assert g.mean_util == 0.0 and g.interval_s == 15.0 and g.first_ms == 1774009423000
    assert g.evidence["other_metrics"] == {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": 0.0}


def test_dcgm_text_scrapes_several_gpus() -> None:
    res = _audit(FIX / "dcgm-k80-scrapes.txt")
    by = {g.gpu: g for g in res.gpus}
    assert sorted(by) == ["0", "1", "2"]
    assert by["0"].mean_util == pytest.approx(180 / 300)
    assert by["1"].mean_util == 0.0
    assert by["2"].samples == 2 and by["2"].mean_util == pytest.approx(0.225)
    assert res.bad_by_kind == {"na": 1}
    assert res.bad_examples["na"] == [f"{FIX / 'dcgm-k80-scrapes.txt'}:12"]


def test_dcgm_scrape_explicit_timestamps_and_no_time(tmp_path: Path) -> None:
    p = tmp_path / "ts.prom"
    p.write_text(
        "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
        + "".join(f'DCGM_FI_DEV_GPU_UTIL{{gpu="0",Hostname="h"}} {u} {1700000000000 + 60000 * i}\n'
                  for i, u in enumerate([100, 100, 0, 0]))
    )
    res = _audit(p)
    assert res.gpus[0].samples == 4 and res.gpus[0].mean_util == pytest.approx(0.5)
    q = tmp_path / "notime.prom"
    q.write_text('DCGM_FI_DEV_GPU_UTIL{gpu="0"} 50\n')
    with pytest.raises(TelemetryError, match="no time"):
        _audit(q)


def test_dcgm_scrape_without_a_utilisation_metric_names_the_metrics(tmp_path: Path, capsys) -> None:
    p = tmp_path / "fb.prom"
    p.write_text("1700000000\n# TYPE DCGM_FI_DEV_FB_USED gauge\n"
                 'DCGM_FI_DEV_FB_USED{gpu="0",Hostname="h"} 1024\n1700000015\n'
                 'DCGM_FI_DEV_FB_USED{gpu="0",Hostname="h"} 1024\n')
    assert main(["audit", str(p)]) == 2
    err = capsys.readouterr().err
    assert "DCGM_FI_DEV_GPU_UTIL" in err and "DCGM_FI_PROF_GR_ENGINE_ACTIVE" in err
    assert "DCGM_FI_DEV_FB_USED" in err and "no data rows" not in err


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("1774009423", 1774009423000),
        ("# 1774009423123", 1774009423123),
        ("2024-03-04T13:00:00Z", 1709557200000),
        ("# 2024-03-04T13:00:00+01:00", 1709553600000),
        ("Mon Mar  4 13:00:00 UTC 2024", 1709557200000),
        ("# some comment", None),
    ],
)
def test_marker_time(text: str, ms: int | None) -> None:
    assert marker_time(text) == ms


def test_all_bad_file_exits_2_with_ledger(capsys) -> None:
    path = FIX / "gen-all-bad.csv"
    assert main(["audit", str(path)]) == 2
    err = capsys.readouterr().err
    assert "no usable row" in err and "5 rows" in err and "na 5" in err and f"{path}:2" in err
    assert "0 GPUs" not in err


def test_all_bad_among_good_files_still_stops(capsys) -> None:
    """One unusable file is not hidden by good ones: the audit names it."""
    bad = FIX / "gen-all-bad.csv"
    assert main(["audit", str(FIX / "saga-monitor.csv"), str(bad), "-o", "json"]) == 2
    assert str(bad) in capsys.readouterr().err


def test_header_only_file_exits_2(tmp_path: Path, capsys) -> None:
    p = tmp_path / "empty.csv"
    p.write_text("timestamp, index, utilization.gpu [%]\n")
    assert main(["audit", str(p)]) == 2
    assert "no data rows" in capsys.readouterr().err


def test_bad_timestamps_all_rows(tmp_path: Path, capsys) -> None:
    p = tmp_path / "t.csv"
    p.write_text("timestamp, utilization.gpu [%]\n" + "".join(f"at noon {i}, 50 %\n" for i in range(3)))
    assert main(["audit", str(p)]) == 2
    assert "malformed 3" in capsys.readouterr().err


def test_cli_json_for_each_real_format(capsys) -> None:
    for name in ("saga-monitor.csv", "omniopt-a100-bus-id.csv", "dcgm-l4-scrape.txt"):
        assert main(["audit", str(FIX / name), "-o", "json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["fleet"]["gpus"] >= 1
