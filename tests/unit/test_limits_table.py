"""The one table of input limits (gpuplan.limits, issue 27): its documentation, names, and the JSON loader."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gpuplan import limits
from gpuplan.errors import GpuplanError, TraceError
from gpuplan.sim import limits as sim_limits
from gpuplan.web import limits as web_limits

DOC = Path(__file__).resolve().parents[2] / "docs" / "limits.md"


def test_docs_render_the_table() -> None:
    assert DOC.read_text(encoding="utf-8") == limits.render_markdown(), (
        "docs/limits.md is out of date: python -m gpuplan.limits > docs/limits.md")


def test_every_row_is_the_module_constant_and_explained() -> None:
    names = [row.name for row in limits.TABLE]
    assert len(names) == len(set(names))
    for row in limits.TABLE:
        assert getattr(limits, row.name) == row.value
        assert row.why and row.unit and row.applies_to


def test_web_and_simulate_read_the_same_values() -> None:
    assert web_limits.MAX_WORKLOADS == limits.MAX_WORKLOADS == 10_000
    assert web_limits.MAX_GPUS_PER_WORKLOAD == limits.MAX_GPUS_PER_WORKLOAD
    assert web_limits.MAX_DEMAND_GPUS == limits.MAX_DEMAND_GPUS
    assert web_limits.MAX_DEMAND_ROWS == limits.MAX_DEMAND_ROWS
    assert web_limits.MAX_SWEEP_LEVELS == sim_limits.MAX_POOL_SIZES == limits.MAX_POOL_SIZES
    assert web_limits.MAX_RESERVED_GPUS == sim_limits.MAX_RESERVED_GPUS == limits.MAX_RESERVED_GPUS
    assert sim_limits.MAX_TRACE_ROWS == limits.MAX_TRACE_ROWS
    assert web_limits.LimitError is limits.LimitError


def test_ten_years_of_hours() -> None:
    assert limits.MAX_DURATION_HOURS == 3650 * 24 == limits.MAX_DEMAND_HOURS


@pytest.mark.parametrize(("name", "words"), [
    ("evil\nPartitionName=evil", "U+000A at position 5"),
    ("a\rb", "U+000D"),
    ("tab\there", "U+0009"),
    ("esc\x1b[31m", "U+001B"),
    ("del\x7f", "U+007F"),
    ("c1\x85", "U+0085"),
    ("line\u2028sep", "U+2028"),
    ("nul\x00", "U+0000"),
    ("x" * 129, "129 characters long"),
])
def test_bad_names(name: str, words: str) -> None:
    problem = limits.name_problem(name)
    assert problem is not None and words in problem
    with pytest.raises(ValueError, match="a name that"):
        limits.check_name(name)


@pytest.mark.parametrize("name", ["x" * 128, "训练-a100", "bm-910b", "team a / run #3", "ü" * 128])
def test_good_names(name: str) -> None:
    assert limits.name_problem(name) is None
    assert limits.check_name(name) == name


def test_depth_counts_brackets_not_strings() -> None:
    assert limits.json_depth(b'{"a": "[[[[{{{{", "b": [1, [2, {"c": "]]]"}]]}') == 4
    assert limits.json_depth(b'"\\"[[["') == 0
    assert limits.json_depth(b"[" * 200_000 + b"]" * 200_000) == 200_000
    assert limits.json_depth(b"[]" * 1_000) == 1


def test_json_at_the_depth_limit_reads_and_one_more_is_refused(tmp_path: Path) -> None:
    n = limits.MAX_JSON_DEPTH
    assert limits.load_json("[" * n + "]" * n) is not None
    with pytest.raises(GpuplanError, match=f"nesting of {n + 1} levels is over the limit of {n} levels"):
        limits.load_json("[" * (n + 1) + "]" * (n + 1))


def test_deep_json_is_refused_quickly_with_the_callers_error(tmp_path: Path) -> None:
    p = tmp_path / "plan.json"
    p.write_bytes(b"[" * 200_000 + b"]" * 200_000)
    t0 = time.perf_counter()
    with pytest.raises(TraceError) as info:
        limits.load_json(p, error=TraceError)
    assert time.perf_counter() - t0 < 2
    assert info.value.file == str(p) and "200,000 levels" in info.value.message


@pytest.mark.parametrize("text", ["[NaN]", '{"d": Infinity}', "[-Infinity]", "[1e999]", "[-1E+400]"])
def test_json_has_no_nan_or_infinity(text: str) -> None:
    with pytest.raises(GpuplanError, match="not valid JSON"):
        limits.load_json(text, file="x.json")


def test_json_errors_name_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "bad.json"
    p.write_bytes(b'{\n"a": 1,\n"b": }\n')
    with pytest.raises(GpuplanError) as info:
        limits.load_json(p)
    assert info.value.file == str(p) and info.value.line == 3
    p.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(GpuplanError, match="not UTF-8"):
        limits.load_json(p)
    with pytest.raises(GpuplanError, match="cannot read"):
        limits.load_json(tmp_path / "missing.json")


def test_large_finite_numbers_still_read() -> None:
    assert limits.load_json("[1e308, 1e-400, 2.5]") == [1e308, 0.0, 2.5]
