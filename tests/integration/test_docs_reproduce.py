"""Every `$ gpuplan ...` output shown in the README and docs reproduces: each line shown appears, in order.

A fenced block whose first line is `$ gpuplan ARGS` is run from the repository root at 100 columns;
the lines after it are an excerpt of its output. Whitespace is compared loosely (rich wraps long
sentences at the terminal width), everything else exactly. A block whose inputs are absent here
(`../shared` traces) is skipped with the reason.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```[a-z]*\n(\$ gpuplan (?:[^\n]*\\\n)*[^\n]*)\n(.*?)^```", re.M | re.S)


def _blocks() -> list[tuple[str, str, str]]:
    out = []
    for doc in DOCS:
        for m in FENCE.finditer(doc.read_text(encoding="utf-8")):
            cmd = m.group(1)[2:].replace("\\\n", " ")
            out.append((f"{doc.name}:{cmd}", cmd, m.group(2)))
    return out


def _norm(text: str) -> str:
    return " ".join(text.split())


BLOCKS = _blocks()


def test_there_are_documented_outputs() -> None:
    assert len(BLOCKS) >= 3, [b[0] for b in BLOCKS]


@pytest.mark.parametrize(("cmd", "shown"), [(c, s) for _, c, s in BLOCKS], ids=[b[0] for b in BLOCKS])
def test_documented_output_reproduces(cmd: str, shown: str) -> None:
    args = shlex.split(cmd)[1:]
    missing = [a for a in args if a.startswith("../shared/") and not (ROOT / a).exists()]
    if missing:
        pytest.skip(f"needs {missing[0]}")
    inputs = [a for a in args if re.search(r"\.(csv|ya?ml|json|log|txt)$", a) and not (ROOT / a).exists()]
    if inputs:
        pytest.skip(f"illustrative command: {inputs[0]} is not in the repository")
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "SOURCE_DATE_EPOCH": "1767225600"}
    run = subprocess.run([sys.executable, "-m", "gpuplan", *args], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    got = _norm(run.stdout)
    pos = 0
    for line in shown.splitlines():
        want = _norm(line.removeprefix("> "))
        if not want or want in ("...", "…"):
            continue
        at = got.find(want, pos)
        assert at >= 0, f"documented line not in the output (in order): {want!r}\n--- output ---\n{run.stdout}"
        pos = at + len(want)
