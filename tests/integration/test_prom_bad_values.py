"""Bad Prometheus values are rows (issue 27): counted in the malformed ledger with where they are, never exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuplan.cli import main

LABELS = {"__name__": "DCGM_FI_DEV_GPU_UTIL", "Hostname": "n1", "gpu": "0"}


def audit(capsys: pytest.CaptureFixture[str], path: Path) -> dict:
    rc = main(["audit", str(path), "-o", "json"])
    out, err = capsys.readouterr()
    assert rc == 0 and "Traceback" not in err, err
    return json.loads(out)["input"]


def test_json_points_with_bad_times_or_shapes_are_malformed(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    # before: a non-numeric time was exit 1 (ValueError: could not convert string to float: 'abc')
    values: list = [[1_700_000_000 + 60 * i, "50"] for i in range(30)]
    values[3] = ["abc", "50"]  # time not a number
    values[5] = [1_700_000_300, "xyz"]  # value not a number
    values[7] = [1e300, "5"]  # no Unix time
    values[9] = [1_700_000_540]  # not a pair
    values[11] = "oops"  # not a list
    values[13] = [True, "5"]  # a JSON boolean is no time
    p = tmp_path / "prom.json"
    p.write_text(json.dumps({"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": LABELS, "values": values}]}}))
    got = audit(capsys, p)
    assert got["bad_by_kind"] == {"malformed": 6}
    assert got["bad_examples"]["malformed"] == [f"{p}: result[0].values[{j}]" for j in (3, 5, 7, 9, 11)]


@pytest.mark.parametrize("result", ['"x"', "[1]", '[{"metric": 1, "values": []}]', '[{"metric": {}, "values": 5}]'])
def test_a_result_of_the_wrong_shape_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               result: str) -> None:
    p = tmp_path / "prom.json"
    p.write_text('{"status": "success", "data": {"resultType": "matrix", "result": ' + result + "}}")
    rc = main(["audit", str(p)])
    err = capsys.readouterr().err
    assert rc == 2 and "prom.json" in err and "Traceback" not in err, err


def test_scrape_lines_with_bad_times_are_malformed_with_their_line(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # before: a time line of 1e300 was exit 1 (OverflowError: int value too large for Polars integer types)
    p = tmp_path / "scrape.txt"
    sample = 'DCGM_FI_DEV_GPU_UTIL{gpu="0",Hostname="n1"}'
    p.write_text("\n".join([
        "# HELP DCGM_FI_DEV_GPU_UTIL util",  # 1
        "1e300",  # 2: no time, no sample
        f"{sample} 50",  # 3: above the first time line
        "1700000000",  # 4
        f"{sample} 50",  # 5
        f"{sample} abc",  # 6: value not a number
        "1700000060",  # 7
        f"{sample} 40 99999999999999999999999",  # 8: its own timestamp past int64
        f"{sample} 30 -5",  # 9: a negative timestamp
        f"{sample} 45",  # 10
    ]) + "\n")
    got = audit(capsys, p)
    assert got["bad_by_kind"] == {"malformed": 5}
    assert sorted(got["bad_examples"]["malformed"], key=lambda s: int(s.rsplit(":", 1)[1])) == [
        f"{p}:{n}" for n in (2, 3, 6, 8, 9)]
