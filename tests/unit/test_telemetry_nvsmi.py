"""nvidia-smi logs with a known truth: the audit recovers means, classes, gaps and every bad row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from telemetry_truth import STEP_S, write_logs

from gpuplan.contracts.audit_document import to_json
from gpuplan.errors import TelemetryError
from gpuplan.telemetry import Collector, _loops, analyze, read_into
from gpuplan.telemetry.nvsmi import read_nvsmi


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory):
    return write_logs(tmp_path_factory.mktemp("logs"))


def _audit(files: list[Path], **kw):
    col = Collector()
    for f in files:
        read_nvsmi(f, col, **kw)
    return analyze(col.finish())


def test_truth_recovered(logs) -> None:
    res = _audit(logs.files)
    assert len(res.gpus) == len(logs.gpus)
    for g in res.gpus:
        truth = logs.gpus[(g.node, g.gpu)]
        assert g.cls == truth.cls, (g.node, g.gpu, g.evidence)
        assert abs(g.mean_util - truth.mean) < 0.01
        assert g.samples == len(truth.utils)
        assert g.observed_hours == pytest.approx(truth.observed_hours, abs=STEP_S / 3600)
        assert g.gap_hours == pytest.approx(truth.gap_hours, abs=1e-6)
        assert 0 <= g.idle_share <= 1 and 0 <= g.busy_share <= 1 and g.idle_share + g.busy_share <= 1 + 1e-9
    assert {g.cls for g in res.gpus} == {"busy", "idle", "starved", "mixed", "partial"}


def test_every_bad_row_counted_with_lines(logs) -> None:
    res = _audit(logs.files)
    assert res.bad_by_kind == {k: len(v) for k, v in logs.bad.items() if v} | {}
    assert set(res.bad_by_kind) == {
        "nul_bytes",
        "truncated",
        "malformed",
        "na",
        "unit_change",
        "out_of_range",
        "duplicate",
        "clock_jump",
    }
    for kind, where in logs.bad.items():
        assert res.bad_examples[kind] == where[:5], kind
    assert res.rows == logs.rows
    assert res.bad_rows == sum(len(v) for v in logs.bad.values())


def test_small_blocks_same_answer_and_deterministic(logs) -> None:
    a = to_json(_audit(logs.files))
    b = to_json(_audit(logs.files, block_bytes=4096))  # lines cut across many block boundaries
    c = to_json(_audit(logs.files))
    assert a == b == c
    assert json.dumps(a, sort_keys=True) == json.dumps(c, sort_keys=True)


def test_node_from_file_stem_or_hostname_and_model(logs) -> None:
    col = Collector()
    read_into(logs.files, col)
    s = col.finish()
    assert {n for n, _ in s.registry.keys} == {"nodeA", "nodeB"}
    models = {s.registry.keys[k]: m for k, m in s.registry.models.items()}
    assert models[("nodeB", "0")] == "NVIDIA H100 80GB HBM3"


def test_uuid_column_iso_time_crlf(tmp_path: Path) -> None:
    p = tmp_path / "host7.log"
    p.write_bytes(
        b"utilization.gpu [%], uuid, timestamp\r\n"
        b"50 %, GPU-aa, 2024-01-01T00:00:00\r\n"
        b"70 %, GPU-aa, 2024-01-01T00:01:00\r\n"
        b"30 %, GPU-bb, 2024-01-01T00:00:00\r\n"
    )
    res = _audit([p])
    by = {(g.node, g.gpu): g for g in res.gpus}
    assert set(by) == {("host7", "GPU-aa"), ("host7", "GPU-bb")}
    assert by[("host7", "GPU-aa")].mean_util == pytest.approx(0.6)
    assert res.bad_rows == 0


def test_unit_change_in_repeated_header(tmp_path: Path) -> None:
    p = tmp_path / "n.csv"
    p.write_text(
        "timestamp, index, utilization.gpu [%], memory.used [MiB]\n"
        "2024/01/01 00:00:00.000, 0, 10 %, 5 MiB\n"
        "timestamp, index, utilization.gpu [%], memory.used [GiB]\n"
        "2024/01/01 00:00:10.000, 0, 20 %, 5 GiB\n"
        "2024/01/01 00:00:20.000, 0, 30 %, 5 MiB\n"
    )
    res = _audit([p])
    assert res.bad_by_kind == {"unit_change": 2}
    assert res.bad_examples["unit_change"] == [f"{p}:3", f"{p}:5"]
    assert res.gpus[0].samples == 2


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("", "no nvidia-smi CSV header"),
        ("hello world\n1,2,3\n", "not an nvidia-smi CSV header"),
        ("timestamp, index, memory.used [MiB]\n", "utilization.gpu"),
    ],
)
def test_header_errors_name_the_file(tmp_path: Path, text: str, needle: str) -> None:
    p = tmp_path / "bad.csv"
    p.write_text(text)
    with pytest.raises(TelemetryError) as exc:
        _audit([p])
    assert needle in str(exc.value) and "bad.csv" in str(exc.value)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=100), min_size=2, max_size=60))
def test_mean_of_regular_samples_is_plain_mean(
    tmp_path_factory: pytest.TempPathFactory, utils: list[int]
) -> None:
    p = tmp_path_factory.mktemp("h") / "x.csv"
    rows = [f"2024/01/01 00:{i // 6:02d}:{(i % 6) * 10:02d}.000, 0, {u} %" for i, u in enumerate(utils)]
    p.write_text("timestamp, index, utilization.gpu [%]\n" + "\n".join(rows) + "\n")
    res = _audit([p])
    g = res.gpus[0]
    assert g.mean_util == pytest.approx(sum(utils) / len(utils) / 100, abs=1e-6)
    assert g.observed_hours == pytest.approx(len(utils) * 10 / 3600)
    assert res.fleet.mean_util == pytest.approx(g.mean_util)
    assert g.cls in ("busy", "idle", "starved", "mixed", "partial")


LAYOUTS = {  # header, a good row's cells at second s (the C parser takes the first; the rest go careful)
    "index": ("timestamp, index, utilization.gpu [%], memory.used [MiB]",
              lambda s: [f"2024/01/01 00:{s // 60 % 60:02d}:{s % 60:02d}.000", "0", "50 %", "5 MiB"]),
    "uuid": ("timestamp, uuid, utilization.gpu [%]",
             lambda s: [f"2024/01/01 00:{s // 60 % 60:02d}:{s % 60:02d}.000", "GPU-a", "50 %"]),
    "hostname": ("timestamp, hostname, index, utilization.gpu [%]",
                 lambda s: [f"2024/01/01 00:{s // 60 % 60:02d}:{s % 60:02d}.000", "n1", "0", "50 %"]),
}


@settings(max_examples=60, deadline=None)
@given(
    layout=st.sampled_from(sorted(LAYOUTS)),
    rows=st.lists(st.sampled_from(["ok", "ok", "ok", "ok", "extra", "missing", "one"]), min_size=1, max_size=60),
    cut=st.integers(0, 30),  # the last line cut short by that many bytes (a log cut by a crash)
    block=st.sampled_from([64, 200, 1 << 20]),
    newline=st.sampled_from(["\n", "\r\n"]),
)
def test_rows_with_extra_or_missing_cells_are_counted_with_their_lines(
    tmp_path_factory: pytest.TempPathFactory, layout: str, rows: list[str], cut: int, block: int, newline: str
) -> None:
    """Any mix of rows with too many or too few cells, and a truncated last line, in any block size:
    each bad row in the ledger as malformed (too many) or truncated (too few) with file:line, every
    good row read, never an internal error."""
    header, good = LAYOUTS[layout]
    lines, want = [header], {"malformed": [], "truncated": []}
    for s, kind in enumerate(rows):
        cells = good(s)
        if kind == "extra":
            cells = [*cells, "7"]
        elif kind == "missing":
            cells = cells[:-1]
        elif kind == "one":
            cells = cells[:1]
        lines.append(", ".join(cells))
        if kind != "ok":
            want["malformed" if kind == "extra" else "truncated"].append(len(lines))
    text = newline.join(lines)
    last = lines[-1]
    if cut and rows[-1] != "extra" and "," in last:  # cut inside or before its last cell: fewer cells
        short = last[: max(1, last.rfind(",") - cut)]
        text = newline.join([*lines[:-1], short])
        want["truncated"] = sorted({*want["truncated"], len(lines)})
    f = tmp_path_factory.mktemp("ragged") / "n1.csv"
    f.write_bytes(text.encode())
    for module in (None, [None]):  # with the C parser where built, then as without it (all careful)
        saved = list(_loops._module)
        if module is not None:
            _loops._module[:] = module
        try:
            col = Collector()
            read_nvsmi(f, col, block_bytes=block)
            s = col.finish()
        finally:
            _loops._module[:] = saved
        for kind in ("malformed", "truncated"):
            assert s.bad.counts.get(kind, 0) == len(want[kind]), (kind, s.bad.counts)
            assert s.bad.examples.get(kind, []) == [f"{f}:{n}" for n in want[kind][:5]]
        assert s.rows == len(lines) - 1
        assert int(s.agg.samples.sum()) == rows.count("ok") - (1 if cut and rows[-1] == "ok" and "," in last else 0)
