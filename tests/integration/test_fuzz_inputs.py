"""Fuzzing every reader with inputs this test makes itself (issue 27): seeded mutations of valid examples.

Each case runs one CLI command in-process (`gpuplan.cli.main`) on a mutated file. It must exit 0 or 2
(never 1: an internal error), print no traceback, finish within `PER_CALL_S`, and the whole run must not
grow the process's peak memory past `MAX_RSS_GROWTH_MB`. Reproduce a failure with the seed and case
number it prints (`GPUPLAN_FUZZ_SEED`, `GPUPLAN_FUZZ_CASES` raise the coverage; the defaults keep the
run under a minute).
"""

from __future__ import annotations

import json
import os
import random
import resource
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuplan.cli import main

ROOT = Path(__file__).resolve().parents[2]
SEED = int(os.environ.get("GPUPLAN_FUZZ_SEED", "27"))
CASES = int(os.environ.get("GPUPLAN_FUZZ_CASES", "24"))
PER_CALL_S = 15.0
MAX_RSS_GROWTH_MB = 1024

# Tokens that broke readers before (issue 27) or are easy to get wrong: huge and odd numbers, durations,
# control characters, invalid UTF-8, nesting, YAML specials, far dates.
TOKENS = [
    b"9" * 29, b"1e999", b"-1e999", b"1e12", b"1e300", b"nan", b"NaN", b"inf", b"-inf", b"Infinity", b"-1", b"0",
    b"0.0000001", b"0x7fffffffffffffff", b"3000000d", b"99999999999999999999999999999d", b"1000000mo",
    b"\x00", b"\n", b"\r", b"\t", b"\x1b[2J", b"\xff\xfe", b"\xc3", "\u2028".encode(), "训练".encode(),
    b"[" * 200, b"{" * 50, b'"', b"'", b"*a", b"&a ", b"!!python/object/apply:os.system", b"? ", b"- ", b": ",
    b",", b",,,,", b"#", b"9999-12-31T23:59:59Z", b"0001-01-01", b"1970-01-01T00:00:00Z", b"x" * 300,
    b"true", b"null", b"[]", b"{}",
]


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One to three edits: put a token in place of a word or at a random place, delete or repeat a span,
    duplicate, drop or swap lines, truncate, flip a byte."""
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(9)
        n = len(data)
        at = rng.randrange(n + 1) if n else 0
        if op == 0 and n:  # replace a word (digits, letters) with a token
            words = [i for i in range(1, n) if data[i - 1:i] in b" :,[{\n\"'" and data[i:i + 1].isalnum()]
            if words:
                i = rng.choice(words)
                j = i
                while j < n and (data[j:j + 1].isalnum() or data[j:j + 1] in b".-_"):
                    j += 1
                data = data[:i] + rng.choice(TOKENS) + data[j:]
        elif op == 1:
            data = data[:at] + rng.choice(TOKENS) + data[at:]
        elif op == 2 and n:
            data = data[:at] + data[at + rng.randint(1, 40):]
        elif op == 3 and n:
            span = data[at:at + rng.randint(1, 200)]
            data = data[:at] + span * rng.randint(2, 50) + data[at:]
        elif op in (4, 5, 6):
            lines = data.split(b"\n")
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            if op == 4:
                lines.insert(i, lines[j])
            elif op == 5 and len(lines) > 1:
                del lines[i]
            else:
                lines[i], lines[j] = lines[j], lines[i]
            data = b"\n".join(lines)
        elif op == 7:
            data = data[:at]
        elif n:
            i = rng.randrange(n)
            data = data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1:]
    return data


def _demand() -> bytes:
    rows = [f"2026-01-05T{h % 24:02d}:00:00Z,ascend-910b,{4 + h % 5}" for h in range(24)]
    rows = [r.replace("2026-01-05", f"2026-01-{5 + h // 24:02d}") for h, r in enumerate(rows * 2)]
    return ("time,gpu,gpus\n" + "\n".join(rows) + "\n").encode()


def _trace() -> bytes:
    return ("submit_time,duration,gpus\n" + "".join(f"{600 * i},{1800 + 300 * (i % 7)},{1 + i % 4}\n"
                                                   for i in range(30))).encode()


def _prom() -> bytes:
    values = [[1_700_000_000 + 60 * i, str(40 + i % 50)] for i in range(20)]
    result = [{"metric": {"__name__": m, "Hostname": "n1", "gpu": g}, "values": values}
              for m in ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_SM_ACTIVE") for g in ("0", "1")]
    return json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}}).encode()


SCENARIO = ROOT / "examples" / "seed-910b.yaml"

# reader -> (valid input, file name, the command on a file at PATH, and the folder TMP)
READERS: dict[str, tuple[Callable[[], bytes], str, Callable[[str, Path], list[str]]]] = {
    "scenario-compare": (SCENARIO.read_bytes, "s.yaml", lambda p, t: ["compare", p]),
    "scenario-plan": (SCENARIO.read_bytes, "s.yaml", lambda p, t: ["plan", p]),
    "demand": (_demand, "demand.csv", lambda p, t: ["plan", str(SCENARIO), "--demand", p]),
    "trace": (_trace, "jobs.csv", lambda p, t: ["simulate", p, "-r", "0:8:4"]),
    "prometheus-json": (_prom, "prom.json", lambda p, t: ["audit", p]),
    "prometheus-text": ((ROOT / "tests/fixtures/telemetry/dcgm-k80-scrapes.txt").read_bytes, "scrape.txt",
                        lambda p, t: ["audit", p]),
    "plan-json": ((ROOT / "tests/golden/export/seed-hybrid.plan.json").read_bytes, "plan.json",
                  lambda p, t: ["export", "skypilot", p, "-o", str(t / "out")]),
    "quotes-csv": ((ROOT / "examples/seed-910b-quotes.csv").read_bytes, "quotes.csv",
                   lambda p, t: ["quotes", "import", p, "--db", f"sqlite:///{t / 'q.sqlite'}"]),
}
# Readers whose remaining exit-1 cases are another change's (issue 27's nvidia-smi cells: helper "kernels").
NVSMI = ((ROOT / "tests/fixtures/telemetry/gen-unix-seconds-nounits.csv").read_bytes, "smi.csv",
         lambda p, t: ["audit", p])


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _fuzz(name: str, make: Callable[[], bytes], file: str, argv: Callable[[str, Path], list[str]],
          tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = random.Random(f"{SEED}:{name}")
    valid = make()
    peak0 = _peak_mb()
    for case in range(CASES):
        data = valid if case == 0 else mutate(valid, rng)
        where = tmp_path / str(case)
        where.mkdir()
        path = where / file
        path.write_bytes(data)
        t0 = time.perf_counter()
        rc = main(argv(str(path), where))
        secs = time.perf_counter() - t0
        out, err = capsys.readouterr()
        what = f"{name} seed {SEED} case {case}: input {data[:300]!r}{'...' if len(data) > 300 else ''}"
        if case == 0:
            assert rc == 0, f"the valid {name} input fails: {err}"
        assert rc in (0, 2), f"{what}\nexit {rc}: {err[-2000:]}"
        assert "Traceback" not in err and "internal error" not in err, f"{what}\n{err[-2000:]}"
        assert secs < PER_CALL_S, f"{what}\ntook {secs:.1f} s"
        if rc == 2:
            assert err.strip(), f"{what}\nexit 2 without a message"
    grown = _peak_mb() - peak0
    assert grown < MAX_RSS_GROWTH_MB, f"{name}: the peak memory grew by {grown:.0f} MB"


@pytest.mark.parametrize("name", sorted(READERS))
def test_fuzz_reader(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _fuzz(name, *READERS[name], tmp_path, capsys)


def test_fuzz_nvidia_smi(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _fuzz("nvidia-smi", *NVSMI, tmp_path, capsys)


def test_mutations_are_seeded_and_change_the_input() -> None:
    valid = SCENARIO.read_bytes()
    a = [mutate(valid, random.Random(f"{SEED}:x")) for _ in range(1)]
    b = [mutate(valid, random.Random(f"{SEED}:x")) for _ in range(1)]
    assert a == b
    rng = random.Random(SEED)
    assert sum(mutate(valid, rng) != valid for _ in range(50)) >= 45
