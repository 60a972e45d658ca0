"""The documented limits (docs/simulate.md, "Limits"): past one, exit 2 at once with a clear message."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from gpuplan.cli import main
from gpuplan.sim import limits

BUNDLED = "alibaba-gpu-v2023/openb_pod_list_default.csv"


@pytest.fixture()
def trace(tmp_path: Path) -> Path:
    p = tmp_path / "jobs.csv"
    p.write_text("submit_time,duration,gpus\n0,3600,4\n0,1800,2\n600,7200,1\n", encoding="utf-8")
    return p


def err_of(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, float]:
    t0 = time.perf_counter()
    rc = main(list(args))
    return rc, " ".join(capsys.readouterr().err.split()), time.perf_counter() - t0


@pytest.mark.parametrize(("reserved", "words"), [
    ("0:100000000:1", "past the limit of 1,000"),
    ("0:1000000000:1", "past the limit of 1,000"),
    ("0:1000:1", "past the limit of 1,000"),  # 1,001 sizes
    ("99999999999999999999", "past the limit of 1,000,000"),
    ("0,8,2000000", "past the limit of 1,000,000"),
])
def test_oversized_sweeps_fail_fast(capsys: pytest.CaptureFixture[str], trace: Path, reserved: str,
                                    words: str) -> None:
    rc, err, secs = err_of(capsys, "simulate", str(trace), "-r", reserved)
    assert rc == 2 and "--reserved" in err and words in err and "Traceback" not in err, err
    assert secs < 5


def test_the_limits_themselves_are_allowed(capsys: pytest.CaptureFixture[str], trace: Path) -> None:
    assert limits.MAX_POOL_SIZES >= 1_000 and limits.MAX_TRACE_ROWS >= 10_000_000
    assert main(["simulate", str(trace), "-r", "0:999:1", "-o", "json"]) == 0  # exactly 1,000 sizes
    assert len(json.loads(capsys.readouterr().out)["runs"]) == 1_000


def test_trace_rows_past_the_limit_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    p = tmp_path / "big.csv"
    p.write_text("submit_time,duration,gpus\n" + "0,60,1\n" * 30, encoding="utf-8")
    limits.check_trace_rows(p, limit=30)  # 30 rows: at the limit
    with pytest.raises(limits.TraceError, match="more than 29 rows"):
        limits.check_trace_rows(p, limit=29)


def test_trace_rows_are_counted_across_blocks(tmp_path: Path) -> None:
    """Rows counted in 4 MiB blocks: a trace of several blocks, with a CRLF line and no newline at its
    end, is at its limit with exactly its rows (the count `bytes.count` gives) and past it with one fewer."""
    p = tmp_path / "blocks.csv"
    body = b"submit_time,duration,gpus\r\n" + b"0,60,1\n" * 1_300_000 + b"0,60,1"  # ~9 MB, 3 blocks
    p.write_bytes(body)
    rows = body.count(b"\n") - 1  # below the header; the last line, without a newline, is not counted
    limits.check_trace_rows(p, limit=rows)
    with pytest.raises(limits.TraceError, match=f"more than {rows - 1:,} rows"):
        limits.check_trace_rows(p, limit=rows - 1)
    log = tmp_path / "philly.json"
    log.write_bytes(b"\xef\xbb\xbf \n[" + b"{},\n" * 100 + b"{}]")
    limits.check_trace_rows(log, limit=1)  # a JSON log is not counted by lines


def test_ten_million_row_limit_reaches_the_cli(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "big.csv"
    p.write_text("submit_time,duration,gpus\n" + "0,60,1\n" * 20, encoding="utf-8")
    monkeypatch.setattr(limits, "MAX_TRACE_ROWS", 10)
    rc, err, _ = err_of(capsys, "simulate", str(p), "-r", "4")
    assert rc == 2 and "big.csv" in err and "more than 10 rows" in err


def test_bad_max_wait_exit_2(capsys: pytest.CaptureFixture[str], trace: Path) -> None:
    rc, err, _ = err_of(capsys, "simulate", str(trace), "-r", "4", "--max-wait", "p99=2h")
    assert rc == 2 and "--max-wait" in err and "p95" in err


def test_bundled_trace_recommends_the_cheapest_r_meeting_the_budget(
    capsys: pytest.CaptureFixture[str], shared_dir: Path, examples_dir: Path
) -> None:
    """Done when: a sweep on the bundled trace with --max-wait p95=2h names the cheapest R meeting it,
    and the choice matches the runs it printed (JSON and the table)."""
    trace = shared_dir / "traces" / BUNDLED
    if not trace.is_file():
        pytest.skip(f"the bundled trace {BUNDLED} is not in the shared folder")
    args = ["simulate", str(trace), "-r", "8:64:8", "--wait", "inf", "-s", str(examples_dir / "seed-910b.yaml"),
            "--max-wait", "p95=2h"]
    assert main([*args, "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    meeting = [r for r in doc["runs"] if r["wait_hours"]["p95"] <= 2.0]
    want = min(meeting, key=lambda r: (r["cost"]["per_month"], r["reserved_gpus"]))
    rec = doc["recommended"]
    assert rec["reserved_gpus"] == want["reserved_gpus"] == 48
    assert rec["cost_per_month"] == want["cost"]["per_month"] and rec["wait_hours"] == want["wait_hours"]
    assert doc["cheapest"]["reserved_gpus"] == 8 and doc["cheapest"]["absurd_wait"]
    for width in ("80", "100"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("COLUMNS", width)
            assert main([*args, "--lang", "en"]) == 0
        out = " ".join(capsys.readouterr().out.split())
        assert "Recommended: lease R = 48 GPUs" in out and "48*" in out
        assert "2,711 h at p95" in out  # the cheapest R's absurd wait is said


def test_plan_trace_rows_past_the_limit_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch, examples_dir: Path) -> None:
    p = tmp_path / "big.csv"
    p.write_text("submit_time,duration,gpus\n" + "0,3600,1\n" * 20, encoding="utf-8")
    monkeypatch.setattr(limits, "MAX_TRACE_ROWS", 10)
    rc, err, _ = err_of(capsys, "plan", str(examples_dir / "seed-910b.yaml"), "--trace", str(p))
    assert rc == 2 and "big.csv" in err and "more than 10 rows" in err
